import { sqlLiteral, summarizeWritePlan, writePlanLines, writePlansTable } from './write-plans';

const counts = (hit: number, walRecords: number, walBytes: number, read = 0) => ({
  'Shared Hit Blocks': hit,
  'Shared Read Blocks': read,
  'Shared Dirtied Blocks': 0,
  'WAL Records': walRecords,
  'WAL FPI': 0,
  'WAL Bytes': walBytes,
});

/**
 * The shape of the create's plan as Postgres 15 gives it: the main query (a CTE Scan) pulls the
 * task's INSERT; the idempotency keys' INSERT pulls the message's; the audit and outbox INSERTs
 * are read by nothing and run after the main query; `unpulled` is read by a scan that never ran.
 */
const createPlan = [
  {
    Plan: {
      'Node Type': 'CTE Scan',
      'CTE Name': 'context_tasks',
      'Actual Loops': 1,
      ...counts(28, 11, 1527, 2),
      Plans: [
        {
          'Node Type': 'Aggregate',
          'Parent Relationship': 'InitPlan',
          'Subplan Name': 'CTE context_tasks',
          'Actual Loops': 1,
          ...counts(3, 0, 0),
          Plans: [{ 'Node Type': 'Index Scan', 'Relation Name': 'tasks', 'Index Name': 'tasks_context_idx', 'Actual Loops': 1, ...counts(3, 0, 0) }],
        },
        {
          'Node Type': 'ModifyTable',
          Operation: 'Insert',
          'Relation Name': 'tasks',
          'Parent Relationship': 'InitPlan',
          'Subplan Name': 'CTE created_task',
          'Actual Loops': 1,
          ...counts(25, 11, 1527),
          Plans: [{ 'Node Type': 'Result', 'Actual Loops': 1, ...counts(2, 0, 0) }],
        },
        {
          'Node Type': 'ModifyTable',
          Operation: 'Insert',
          'Relation Name': 'messages',
          'Parent Relationship': 'InitPlan',
          'Subplan Name': 'CTE message',
          'Actual Loops': 1,
          ...counts(5, 4, 713),
        },
        {
          'Node Type': 'ModifyTable',
          Operation: 'Insert',
          'Relation Name': 'idempotency_keys',
          'Parent Relationship': 'InitPlan',
          'Subplan Name': 'CTE idempotency',
          'Actual Loops': 1,
          ...counts(8, 7, 1176),
          Plans: [{ 'Node Type': 'CTE Scan', 'CTE Name': 'message', 'Actual Loops': 1, ...counts(5, 4, 713) }],
        },
        {
          'Node Type': 'ModifyTable',
          Operation: 'Insert',
          'Relation Name': 'audit_log',
          'Parent Relationship': 'InitPlan',
          'Subplan Name': 'CTE audit',
          'Actual Loops': 1,
          ...counts(4, 3, 319),
        },
        {
          'Node Type': 'ModifyTable',
          Operation: 'Insert',
          'Relation Name': 'outbox_events',
          'Parent Relationship': 'InitPlan',
          'Subplan Name': 'CTE outbox',
          'Actual Loops': 1,
          ...counts(10, 7, 1411),
          Plans: [{ 'Node Type': 'CTE Scan', 'CTE Name': 'unpulled', 'Actual Loops': 0, ...counts(0, 0, 0) }],
        },
        {
          'Node Type': 'ModifyTable',
          Operation: 'Insert',
          'Relation Name': 'artifacts',
          'Parent Relationship': 'InitPlan',
          'Subplan Name': 'CTE unpulled',
          'Actual Loops': 1,
          ...counts(1, 1, 100),
          Plans: [{ 'Node Type': 'Index Scan', 'Relation Name': 'tasks', 'Index Name': 'tasks_context_idx', 'Actual Loops': 1, ...counts(1, 0, 0) }],
        },
        {
          'Node Type': 'Aggregate',
          'Parent Relationship': 'InitPlan',
          'Subplan Name': 'InitPlan 10 (returns $15)',
          'Actual Loops': 1,
          ...counts(25, 11, 1527),
          Plans: [{ 'Node Type': 'CTE Scan', 'CTE Name': 'created_task', 'Actual Loops': 1, ...counts(25, 11, 1527) }],
        },
      ],
    },
    'Planning Time': 0.04,
    Triggers: [
      { 'Trigger Name': 'RI_ConstraintTrigger_c_1', Relation: 'messages', Time: 0.018, Calls: 1 },
      { 'Trigger Name': 'RI_ConstraintTrigger_c_2', Relation: 'audit_log', Time: 0.007, Calls: 1 },
    ],
    'Execution Time': 0.387,
  },
];

describe('the write plans summary', () => {
  it('adds the main query to the data-modifying CTEs that ran outside it, counting a pulled CTE once', () => {
    const summary = summarizeWritePlan('create', 'tasks-create-task', createPlan);
    // Main query 28 (with the task's INSERT), idempotency 8 (with the message's 5), audit 4, outbox 10, unpulled 1.
    expect(summary).toMatchObject({
      operation: 'create',
      statement: 'tasks-create-task',
      executionMs: 0.387,
      planningMs: 0.04,
      sharedHit: 28 + 8 + 4 + 10 + 1,
      sharedRead: 2,
      walRecords: 11 + 7 + 3 + 7 + 1,
      walBytes: 1527 + 1176 + 319 + 1411 + 100,
      walFpi: 0,
    });
    expect(summary.triggers).toEqual([
      { name: 'RI_ConstraintTrigger_c_1', calls: 1, ms: 0.018 },
      { name: 'RI_ConstraintTrigger_c_2', calls: 1, ms: 0.007 },
    ]);
  });

  it('names every node once, ModifyTable by its operation, and every index it reads', () => {
    const summary = summarizeWritePlan('create', 'tasks-create-task', createPlan);
    expect(summary.nodes).toEqual([
      'CTE Scan',
      'Aggregate',
      'Index Scan on tasks using tasks_context_idx',
      'Insert on tasks',
      'Result',
      'Insert on messages',
      'Insert on idempotency_keys',
      'Insert on audit_log',
      'Insert on outbox_events',
      'Insert on artifacts',
    ]);
    const upsert = [{ Plan: { 'Node Type': 'ModifyTable', Operation: 'Insert', 'Conflict Arbiter Indexes': ['artifacts_pkey'] }, 'Execution Time': 1 }];
    expect(summarizeWritePlan('append', 'x', upsert)).toMatchObject({ indexes: ['artifacts_pkey'], sharedHit: 0, walBytes: 0, planningMs: 0, triggers: [] });
    expect(summary.indexes).toEqual(['tasks_context_idx']);
  });

  it('prints one table row per write and size, and one console line per write', () => {
    const create = summarizeWritePlan('create', 'tasks-create-task', createPlan);
    const append = { ...create, operation: 'append' as const, statement: 'tasks-change-task-none-0101', triggers: [], indexes: [] };
    const table = writePlansTable([
      { size: 10000, writes: [create, append] },
      { size: 1000000, writes: [create] },
    ]).split('\n');
    expect(table).toHaveLength(5);
    expect(table[0].split('|').length).toBe(table[1].split('|').length);
    expect(table[2]).toBe('| 10,000 | create | 0.387 | 51 | 2 | 0 | 29 | 0 | 4,533 | 0.025 | tasks_context_idx |');
    expect(table[3]).toBe('| 10,000 | append | 0.387 | 51 | 2 | 0 | 29 | 0 | 4,533 | 0.000 | – |');
    expect(table[4]).toMatch(/^\| 1,000,000 \| create \|/);
    const [line, appendLine] = writePlanLines([create, append]);
    expect(line).toBe(
      'create (tasks-create-task): 0.387 ms, shared hit 51 read 2 dirtied 0, WAL 29 records 0 FPI 4533 bytes; ' +
        `${create.nodes.join(' · ')}; triggers RI_ConstraintTrigger_c_1 ×1 0.018 ms, RI_ConstraintTrigger_c_2 ×1 0.007 ms`,
    );
    expect(appendLine).not.toContain('triggers');
  });

  it("writes EXECUTE's literals, arrays in Postgres's array input form", () => {
    const client = { escapeLiteral: (text: string) => `'${text.replace(/'/g, "''")}'` };
    expect(sqlLiteral(client, null)).toBe('NULL');
    expect(sqlLiteral(client, 3)).toBe('3');
    expect(sqlLiteral(client, false)).toBe('false');
    expect(sqlLiteral(client, "it's")).toBe("'it''s'");
    expect(sqlLiteral(client, new Date('2026-01-02T03:04:05.678Z'))).toBe("'2026-01-02T03:04:05.678Z'");
    expect(sqlLiteral(client, [])).toBe("'{}'");
    expect(sqlLiteral(client, ['message_id', 'a "b" \\c', null])).toBe(`'{"message_id","a \\"b\\" \\\\c",NULL}'`);
    expect(() => sqlLiteral(client, [1])).toThrow(/array literal/);
    expect(() => sqlLiteral(client, {})).toThrow(/no literal/);
  });
});
