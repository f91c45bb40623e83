import { diffStats, parseUnifiedDiff } from '../lib/unified-diff';

/** A unified diff, line by line: added lines green, removed red (their +/− stays, so colour is not the only cue). */
export function FileDiff({ path, diff }: { path: string; diff: string }) {
  const lines = parseUnifiedDiff(diff);
  const { added, removed } = diffStats(lines);
  return (
    <figure className="diff" aria-label={`Diff of ${path}`}>
      <figcaption>
        <code>{path}</code> <span className="diff-stats">{`+${added} −${removed}`}</span>
      </figcaption>
      <pre className="diff-body">
        {lines.map((line, index) => (
          <span key={index} className={`diff-line diff-${line.kind}`}>
            {line.text}
            {'\n'}
          </span>
        ))}
      </pre>
    </figure>
  );
}
