import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { adminApi } from '../../api/admin-api';
import { ApiError } from '../../api/api-error';
import type { OrgChanges, OrgRecord } from '../../api/types';
import { ErrorMessage } from '../../components/error-message';
import { TimeStamp } from '../../components/time-stamp';
import { ORIGIN_LABELS, orgFormValues, relayWideAdminOnly } from '../../lib/org-form';
import { useDocumentTitle } from '../../lib/use-document-title';
import { useRole } from '../../session/session-context';
import { OrgFieldsForm } from './org-fields-form';

const CHAIN_LABELS: Record<string, string> = {
  max_depth: 'Deepest chain',
  budget: 'Handoffs per chain',
  max_age_minutes: 'Oldest chain (minutes)',
  pair_per_minute: 'Handoffs per pair a minute',
  refuse_cycles: 'Refuses cycles',
  cycle_allowed_pairs: 'Pairs allowed to cycle',
};

function boundText(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.map((entry) => (Array.isArray(entry) ? entry.join(' ↔ ') : String(entry))).join(', ') || 'none';
  return String(value);
}

/** The org's display name and quotas, which a relay-wide admin changes; others read them, told why they may not. */
function OrgSettings({ org }: { org: OrgRecord }) {
  const queryClient = useQueryClient();
  const { grants, relayWideAllows } = useRole();
  const mayEdit = relayWideAllows('admin');
  const save = useMutation({
    mutationFn: (changes: OrgChanges) => adminApi.updateOrg(org.name, changes),
    onSuccess: (updated) => {
      queryClient.setQueryData(['org', org.name], updated);
      void queryClient.invalidateQueries({ queryKey: ['orgs'] });
    },
  });
  return (
    <section className="card" aria-labelledby="org-settings-title">
      <h2 id="org-settings-title">Display name and quotas</h2>
      {!mayEdit && (
        <p className="hint" data-testid="org-edit-refused">
          {relayWideAdminOnly(grants, 'Changing an org')}
        </p>
      )}
      <OrgFieldsForm
        key={org.updated_at}
        mutation={save}
        toBody={(changes) => changes}
        initial={orgFormValues(org)}
        withName={false}
        disabled={!mayEdit}
        submitLabel="Save"
      >
        {save.isSuccess && <p role="status">Saved.</p>}
      </OrgFieldsForm>
    </section>
  );
}

/** What the org gives its new agents and its handoffs: the default trust policy and the chain bounds. */
function OrgDefaults({ org }: { org: OrgRecord }) {
  const bounds = Object.entries(org.chain).filter(([, value]) => value !== undefined);
  return (
    <section className="card" aria-labelledby="org-defaults-title">
      <h2 id="org-defaults-title">Defaults</h2>
      <h3>Trust policy of a new agent</h3>
      {org.defaults.trust ? (
        <pre data-testid="org-default-trust">{JSON.stringify(org.defaults.trust, null, 2)}</pre>
      ) : (
        <p>The relay’s: its agents accept handoffs from their own org only.</p>
      )}
      <h3>Chain bounds</h3>
      {bounds.length === 0 ? (
        <p>The relay’s.</p>
      ) : (
        <dl className="facts">
          {bounds.map(([key, value]) => (
            <div key={key}>
              <dt>{CHAIN_LABELS[key] ?? key}</dt>
              <dd>{boundText(value)}</dd>
            </div>
          ))}
        </dl>
      )}
      <h3>A2A tenant</h3>
      <p data-testid="org-tenant">{org.tenant === null ? 'None: its agents’ cards carry no tenant.' : <code>{org.tenant}</code>}</p>
      <h3>Approvals channel</h3>
      <p data-testid="org-approvals-channel">{approvalsChannelText(org)}</p>
    </section>
  );
}

/** Where the org's held handoffs are announced, as the API shows it (the host, never the URL). */
function approvalsChannelText(org: OrgRecord): string {
  const channel = org.notifications?.approvals_slack_url;
  if (channel === undefined) return 'Not known: the notifier did not answer.';
  return channel.configured ? `Slack, at ${channel.host ?? 'a host not shown'}.` : 'None of its own (docs/orgs.md, approvals notifications).';
}

function OrgAgents({ name }: { name: string }) {
  const agents = useInfiniteQuery({
    queryKey: ['agents', name],
    queryFn: ({ pageParam }) => adminApi.listAgents(pageParam || undefined, name),
    initialPageParam: '',
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const rows = agents.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <section aria-labelledby="org-agents-title">
      <h2 id="org-agents-title">Agents</h2>
      {agents.isPending && <p role="status">Loading agents…</p>}
      {agents.isError && <ErrorMessage error={agents.error} />}
      {agents.isSuccess && rows.length === 0 && <p>No agent is registered in {name}.</p>}
      {rows.length > 0 && (
        <table className="table">
          <caption>Agents of {name}</caption>
          <thead>
            <tr>
              <th scope="col">Handle</th>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Registered</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((agent) => (
              <tr key={agent.id}>
                <td>
                  <Link to={`/agents/${encodeURIComponent(agent.handle)}`}>{agent.handle}</Link>
                </td>
                <td>{agent.name}</td>
                <td>{agent.disabled ? 'Disabled' : 'Active'}</td>
                <td>
                  <TimeStamp at={agent.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {agents.hasNextPage && (
        <button type="button" className="button secondary" onClick={() => void agents.fetchNextPage()}>
          More agents
        </button>
      )}
    </section>
  );
}

function OrgPeople({ name }: { name: string }) {
  const people = useQuery({ queryKey: ['org', name, 'people'], queryFn: () => adminApi.orgPeople(name) });
  const rows = people.data?.items ?? [];
  return (
    <section aria-labelledby="org-people-title">
      <h2 id="org-people-title">People</h2>
      <p className="hint">
        Roles given through the admin API (<code>PUT /admin/people/&#123;sub&#125;/roles</code>). People also hold roles here through their provider’s claims
        and groups, and relay-wide roles reach every org; those are not listed.
      </p>
      {people.isPending && <p role="status">Loading people…</p>}
      {people.isError && <ErrorMessage error={people.error} />}
      {people.isSuccess && rows.length === 0 && <p>No one has been given a role in {name} through the admin API.</p>}
      {rows.length > 0 && (
        <table className="table">
          <caption>People given roles in {name}</caption>
          <thead>
            <tr>
              <th scope="col">Subject</th>
              <th scope="col">Role</th>
              <th scope="col">Given</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((person) => (
              <tr key={person.subject}>
                <td>
                  <code>{person.subject}</code>
                </td>
                <td>{person.role}</td>
                <td>
                  <TimeStamp at={person.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {people.data?.next_cursor && <p className="hint">More people have roles here than this page shows; the admin API lists them all.</p>}
    </section>
  );
}

/** One org: its record (display name, quotas, defaults, chain bounds), its agents and the people given roles in it. */
export function OrgPage() {
  const { name = '' } = useParams();
  useDocumentTitle(`Org ${name}`);
  const org = useQuery({ queryKey: ['org', name], queryFn: () => adminApi.getOrg(name) });
  if (org.isPending) return <p role="status">Loading the org…</p>;
  if (org.isError) {
    if (org.error instanceof ApiError && org.error.status === 404) {
      return (
        <>
          <h1>Org not found</h1>
          <p>
            No org is named <code>{name}</code>. <Link to="/orgs">All orgs</Link>
          </p>
        </>
      );
    }
    return (
      <>
        <h1>Org {name}</h1>
        <ErrorMessage error={org.error} />
        <Link to="/orgs">All orgs</Link>
      </>
    );
  }
  const record = org.data;
  return (
    <>
      <h1>
        {record.display_name ?? record.name} <span className="handle">({record.name})</span>
      </h1>
      <p>
        {record.agents.toLocaleString('en')} {record.agents === 1 ? 'agent' : 'agents'}. {ORIGIN_LABELS[record.origin]}, <TimeStamp at={record.created_at} />;
        changed <TimeStamp at={record.updated_at} />. <Link to={`/handoffs?org=${encodeURIComponent(record.name)}`}>Its handoffs</Link>
      </p>
      <div className="columns">
        <OrgSettings org={record} />
        <OrgDefaults org={record} />
      </div>
      <OrgAgents name={record.name} />
      <OrgPeople name={record.name} />
    </>
  );
}
