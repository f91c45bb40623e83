import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { adminApi } from '../../api/admin-api';
import type { NewOrg } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { ORIGIN_LABELS, QUOTAS, quotaText, relayWideAdminOnly } from '../../lib/org-form';
import { useDocumentTitle } from '../../lib/use-document-title';
import { useRole } from '../../session/session-context';
import { OrgFieldsForm } from './org-fields-form';

/** Creates an org with its display name and quotas (relay-wide admins only); then opens its page. */
function CreateOrgForm() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const create = useMutation({
    mutationFn: (org: NewOrg) => adminApi.createOrg(org),
    onSuccess: (org) => {
      void queryClient.invalidateQueries({ queryKey: ['orgs'] });
      queryClient.setQueryData(['org', org.name], org);
      void navigate(`/orgs/${encodeURIComponent(org.name)}`);
    },
  });
  return (
    <section className="card" aria-labelledby="create-org-title">
      <h2 id="create-org-title">Create an org</h2>
      <p className="hint">Its agents are those whose handles end in @ and its name. Trust defaults and chain bounds are set through the API or the CLI.</p>
      <OrgFieldsForm
        mutation={create}
        toBody={(changes, name) => ({ name, ...(changes.display_name ? { display_name: changes.display_name } : {}), quotas: changes.quotas })}
        withName
        disabled={false}
        submitLabel={create.isPending ? 'Creating…' : 'Create org'}
      />
    </section>
  );
}

/** The orgs the person sees (every org for a relay-wide role, theirs otherwise), and for a relay-wide admin the form that creates one. */
export function OrgsPage() {
  useDocumentTitle('Orgs');
  const { grants, relayWideAllows } = useRole();
  const orgs = useInfiniteQuery({
    queryKey: ['orgs', 'pages'],
    queryFn: ({ pageParam }) => adminApi.listOrgs(pageParam || undefined),
    initialPageParam: '',
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const rows = orgs.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <h1>Orgs</h1>
      {relayWideAllows('admin') ? (
        <CreateOrgForm />
      ) : (
        <p className="hint" data-testid="create-org-refused">
          {relayWideAdminOnly(grants, 'Creating an org')}
        </p>
      )}
      {orgs.isPending && <p role="status">Loading orgs…</p>}
      {orgs.isError && <ErrorMessage error={orgs.error} />}
      {orgs.isSuccess && rows.length === 0 && <p>No org yet: one is made when its first agent is registered, or created here.</p>}
      {rows.length > 0 && (
        <table className="table">
          <caption>Orgs, by name</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Display name</th>
              <th scope="col">Agents</th>
              {QUOTAS.map(({ quota, label }) => (
                <th key={quota} scope="col">
                  {label} quota
                </th>
              ))}
              <th scope="col">Origin</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((org) => (
              <tr key={org.name}>
                <td>
                  <Link to={`/orgs/${encodeURIComponent(org.name)}`}>{org.name}</Link>
                </td>
                <td>{org.display_name ?? '—'}</td>
                <td>{org.agents.toLocaleString('en')}</td>
                {QUOTAS.map(({ quota }) => (
                  <td key={quota}>{quotaText(org.quotas[quota])}</td>
                ))}
                <td>{ORIGIN_LABELS[org.origin]}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {orgs.hasNextPage && (
        <button type="button" className="button secondary" disabled={orgs.isFetchingNextPage} onClick={() => void orgs.fetchNextPage()}>
          More orgs
        </button>
      )}
    </>
  );
}
