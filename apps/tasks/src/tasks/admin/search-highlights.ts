import type pg from 'pg';
import { ADMIN_TASK_LIMITS, type HighlightFragment, type SearchHighlight } from '@app/contracts';
import { ARTIFACT_SEARCH_TEXT, ARTIFACT_SEARCH_VECTOR } from '../../database/migrations/1764560000000-ConsoleReads';
import { MESSAGE_SEARCH_TEXT } from '../../database/migrations/1764590000000-BoundedSearch';

/** Where a highlight's matches start and stop: control characters, removed from the text first, so that no text is read as markup. */
const START_SEL = '\u0001';
const STOP_SEL = '\u0002';
/** Characters of a matching message's text a highlight is made from. */
export const HEADLINE_CHARS = 10_000;
// One excerpt around the best match: Postgres's fragment mode (MaxFragments > 0) drops the punctuation that ends a fragment.
const HEADLINE_OPTIONS = `StartSel=${START_SEL}, StopSel=${STOP_SEL}, MaxWords=35, MinWords=15`;

/**
 * Up to three highlights per task (its best matching messages, as ranked, then artifact names), as
 * fragments; a message's from the first HEADLINE_CHARS characters of its text.
 */
export async function searchHighlights(
  client: pg.PoolClient,
  query: string,
  taskIds: string[],
  messageHits: Array<{ task_id: string; sequence_no: number; rank: string }>,
): Promise<Map<string, SearchHighlight[]>> {
  const result = new Map<string, SearchHighlight[]>();
  if (taskIds.length === 0) return result;
  const { rows } = await client.query<{
    task_id: string;
    source: 'message' | 'artifact';
    sequence_no: number | null;
    name: string | null;
    headline: string;
  }>(
    `WITH q AS (SELECT websearch_to_tsquery('english', $1) AS "query"),
     found AS (
       SELECT m."task_id", 'message' AS "source", m."sequence_no", NULL::text AS "name", h."rank"::real AS "rank",
         ts_headline('english', translate(left(${MESSAGE_SEARCH_TEXT}, ${HEADLINE_CHARS}), E'\\x01\\x02', ''), q."query", $3) AS "headline"
       FROM unnest($5::bpchar[], $6::int[], $7::text[]) AS h("task_id", "sequence_no", "rank")
       -- One message by its key each (LIMIT keeps the planner from joining the whole table instead).
       CROSS JOIN LATERAL (SELECT x."task_id", x."sequence_no", x."parts" FROM "tasks"."messages" x
                           WHERE x."task_id" = h."task_id" AND x."sequence_no" = h."sequence_no" LIMIT 1) m
       CROSS JOIN q
       UNION ALL
       SELECT a."task_id", 'artifact', NULL, COALESCE(a."name", a."fields"->>'path'), ts_rank(${ARTIFACT_SEARCH_VECTOR}, q."query"),
         ts_headline('english', translate(${ARTIFACT_SEARCH_TEXT}, E'\\x01\\x02', ''), q."query", $3 || ', HighlightAll=true')
       FROM "tasks"."artifacts" a CROSS JOIN q
       WHERE a."task_id" = ANY($2::text[]) AND ${ARTIFACT_SEARCH_VECTOR} @@ q."query"
     )
     SELECT "task_id", "source", "sequence_no", "name", "headline" FROM (
       SELECT found.*, row_number() OVER (PARTITION BY "task_id" ORDER BY "rank" DESC, "source" DESC, "sequence_no") AS "n" FROM found
     ) ranked WHERE "n" <= $4 ORDER BY "task_id", "n"`,
    [
      query,
      taskIds,
      HEADLINE_OPTIONS,
      ADMIN_TASK_LIMITS.highlightsPerHit,
      messageHits.map((hit) => hit.task_id),
      messageHits.map((hit) => hit.sequence_no),
      messageHits.map((hit) => hit.rank),
    ],
  );
  for (const row of rows) {
    const highlight: SearchHighlight =
      row.source === 'message'
        ? { source: 'message', sequence_no: row.sequence_no as number, fragments: fragmentsOf(row.headline) }
        : { source: 'artifact', artifact_name: row.name ?? '', fragments: fragmentsOf(row.headline) };
    result.set(row.task_id, [...(result.get(row.task_id) ?? []), highlight]);
  }
  return result;
}

/** `ts_headline` text with its StartSel/StopSel marks, as plain fragments: the console marks the matches, never the server's HTML. */
export function fragmentsOf(headline: string): HighlightFragment[] {
  const fragments: HighlightFragment[] = [];
  let rest = headline;
  while (rest.length > 0) {
    const start = rest.indexOf(START_SEL);
    if (start < 0) {
      fragments.push({ text: rest, match: false });
      break;
    }
    if (start > 0) fragments.push({ text: rest.slice(0, start), match: false });
    const stop = rest.indexOf(STOP_SEL, start + 1);
    const end = stop < 0 ? rest.length : stop;
    if (end > start + 1) fragments.push({ text: rest.slice(start + 1, end), match: true });
    rest = stop < 0 ? '' : rest.slice(stop + 1);
  }
  // Neighbouring matches ("refactored users") read as one mark.
  return fragments.reduce<HighlightFragment[]>((merged, fragment) => {
    const previous = merged[merged.length - 1];
    if (previous && previous.match === fragment.match) previous.text += fragment.text;
    else merged.push({ ...fragment });
    return merged;
  }, []);
}
