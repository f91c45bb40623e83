import { runSweeps, type RetentionHooks, type RetentionSweep } from './retention';

/** A table of `rows` old rows that gives up to `limit` of them per batch, recording each batch's size. */
function table(name: string, rows: number): RetentionSweep & { batches: number[] } {
  let left = rows;
  const batches: number[] = [];
  return {
    table: name,
    batches,
    deleteBatch: (limit) => {
      const taken = Math.min(limit, left);
      left -= taken;
      batches.push(taken);
      return Promise.resolve(taken);
    },
  };
}

function hooks(stopAfterBatches = Infinity): RetentionHooks & { pauses: number[]; reported: Array<[string, number]> } {
  const pauses: number[] = [];
  const reported: Array<[string, number]> = [];
  return {
    pauses,
    reported,
    deleted: (name, rows) => void reported.push([name, rows]),
    stopping: () => reported.length >= stopAfterBatches,
    pause: (ms) => {
      pauses.push(ms);
      return Promise.resolve();
    },
  };
}

describe('runSweeps', () => {
  it('deletes each table in batches until a batch comes back short, pausing between batches', async () => {
    const audit = table('audit', 2500);
    const keys = table('keys', 1000);
    const run = hooks();
    const counts = await runSweeps([audit, keys], { batchSize: 1000, pauseMs: 50 }, run);
    expect(counts).toEqual({ audit: 2500, keys: 1000 });
    expect(audit.batches).toEqual([1000, 1000, 500]);
    // A full last batch may have left rows behind: one more batch finds none.
    expect(keys.batches).toEqual([1000, 0]);
    expect(run.pauses).toEqual([50, 50, 50]);
    expect(run.reported).toEqual([
      ['audit', 1000],
      ['audit', 1000],
      ['audit', 500],
      ['keys', 1000],
    ]);
  });

  it('asks a table with nothing past its window once, and stops between batches when the process stops', async () => {
    const empty = table('empty', 0);
    const big = table('big', 10_000);
    const counts = await runSweeps([empty, big], { batchSize: 100, pauseMs: 0 }, hooks(3));
    expect(empty.batches).toEqual([0]);
    expect(big.batches).toEqual([100, 100, 100]);
    expect(counts).toEqual({ empty: 0, big: 300 });
  });
});
