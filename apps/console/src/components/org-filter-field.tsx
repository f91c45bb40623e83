import { useId } from 'react';
import { useQuery } from '@tanstack/react-query';
import { adminApi } from '../api/admin-api';
import { useRole } from '../session/session-context';

/** The orgs the person sees, for the org filter's suggestions (the first page: a name beyond it can still be typed). */
export function useVisibleOrgs(enabled: boolean) {
  return useQuery({ queryKey: ['orgs', 'names'], queryFn: () => adminApi.listOrgs(), enabled, staleTime: 60_000 });
}

/**
 * The org filter of a list, for a person who sees several orgs (a relay-wide role, or roles in
 * more than one): the list shows what one org's agents are party to. Nothing for a person of one org.
 */
export function OrgFilterField({ value }: { value: string }) {
  const { seesSeveralOrgs } = useRole();
  const orgs = useVisibleOrgs(seesSeveralOrgs);
  const id = useId();
  if (!seesSeveralOrgs) return null;
  return (
    <div className="field">
      <label htmlFor={`${id}-org`}>Org</label>
      <input id={`${id}-org`} name="org" list={`${id}-orgs`} defaultValue={value} placeholder="any org" autoComplete="off" spellCheck={false} />
      <datalist id={`${id}-orgs`}>
        {orgs.data?.items.map((org) => (
          <option key={org.name} value={org.name}>
            {org.display_name ?? org.name}
          </option>
        ))}
      </datalist>
    </div>
  );
}
