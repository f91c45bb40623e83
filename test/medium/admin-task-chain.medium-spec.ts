import type { AdminTaskRow, ParticipantRefDto } from '@app/contracts';
import { AdminTaskChain } from '../../apps/tasks/src/tasks/admin/task-chain';
import { createTask, openTasksDatabase, participant, rejectionOf, type TasksDatabase } from './support/tasks-database';

/** Whether every node but the root has its parent among the nodes: one tree, nothing hanging loose. */
function holdsTogether(nodes: AdminTaskRow[]): boolean {
  const ids = new Set(nodes.map((node) => node.id));
  return nodes.every((node) => node.chain?.parent_task_id === null || ids.has(node.chain?.parent_task_id ?? ''));
}

/** The admin API's chain read at the store: the path, the children and the tree from the root, bounded. */
describe('a chain read for the admin API', () => {
  let database: TasksDatabase;
  let chains: AdminTaskChain;
  const ids: Record<string, string> = {};
  const children: string[] = [];

  /** A handoff for `parent` from its recipient `sender` to a new participant: its id and the new recipient. */
  const handOn = async (sender: ParticipantRefDto, parent: string | undefined, name: string): Promise<{ id: string; recipient: ParticipantRefDto }> => {
    const recipient = participant(name);
    const task = await createTask(database, sender, recipient, parent ? { parent_task_ids: [parent] } : {});
    return { id: task.id, recipient };
  };

  beforeAll(async () => {
    database = await openTasksDatabase();
    chains = new AdminTaskChain(database.dataSource);
    // root (depth 0) → six handoffs at depth 1 → six below the first at depth 2 → one at depth 3 (the task read) → four at depth 4.
    const lead = participant('lead');
    const root = await handOn(lead, undefined, 'helper');
    ids.root = root.id;
    const first = await handOn(root.recipient, root.id, 'level1-0');
    ids.first = first.id;
    for (let index = 1; index < 6; index++) await handOn(root.recipient, root.id, `level1-${index}`);
    const second = await handOn(first.recipient, first.id, 'level2-0');
    ids.second = second.id;
    for (let index = 1; index < 6; index++) await handOn(first.recipient, first.id, `level2-${index}`);
    const read = await handOn(second.recipient, second.id, 'level3');
    ids.read = read.id;
    for (let index = 0; index < 4; index++) children.push((await handOn(read.recipient, read.id, `level4-${index}`)).id);
  });

  afterAll(async () => {
    await database.close();
  });

  it('reads the whole tree when it fits, by depth then creation', async () => {
    const chain = await chains.chain({ task_id: ids.read, limit: 500 });
    expect(chain).toMatchObject({ task_id: ids.read, root_task_id: ids.root, total: 18, nodes_truncated: false });
    expect(chain.nodes).toHaveLength(18);
    const order = chain.nodes.map((node) => [node.chain?.depth, node.id]);
    expect(order).toEqual([...order].sort(([depthA, idA], [depthB, idB]) => Number(depthA) - Number(depthB) || String(idA).localeCompare(String(idB))));
    expect(holdsTogether(chain.nodes)).toBe(true);
  });

  it('carries, past its limit, the path and the children first, then the tree from the top, and it still holds together', async () => {
    const chain = await chains.chain({ task_id: ids.read, limit: 5 });
    const shown = chain.nodes.map((node) => node.id);
    expect(shown).toEqual(expect.arrayContaining([ids.root, ids.first, ids.second, ids.read, ...children]));
    // Four on the path, then at most five more: the four children and the first of the tree's next level not yet shown.
    expect(shown).toHaveLength(9);
    expect(chain).toMatchObject({ total: 18, nodes_truncated: true });
    expect(holdsTogether(chain.nodes)).toBe(true);

    const fromRoot = await chains.chain({ task_id: ids.root, limit: 3 });
    expect(fromRoot.nodes.map((node) => node.chain?.depth)).toEqual([0, 1, 1, 1]);
    expect(holdsTogether(fromRoot.nodes)).toBe(true);
  });

  it('answers a task that does not exist, or an id that is none, as task_not_found', async () => {
    expect((await rejectionOf(chains.chain({ task_id: '01HXYZ4K2VNJQP7R8MWDB3CSTF' }))).reason).toBe('task_not_found');
    expect((await rejectionOf(chains.chain({ task_id: 'not a task' }))).reason).toBe('task_not_found');
  });
});
