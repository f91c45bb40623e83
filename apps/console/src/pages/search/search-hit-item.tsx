import { Link } from 'react-router';
import type { SearchHit } from '../../api/types';
import { intentLabel } from '../../components/intent-label';
import { StateBadge } from '../../components/state-badge';
import { TimeStamp } from '../../components/time-stamp';
import { HighlightedText } from './highlighted-text';

function sourceLabel(highlight: SearchHit['highlights'][number]): string {
  if (highlight.source === 'artifact') return `Artifact${highlight.artifact_name ? ` ${highlight.artifact_name}` : ''}`;
  return `Message${highlight.sequence_no !== undefined ? ` ${highlight.sequence_no}` : ''}`;
}

export function SearchHitItem({ hit }: { hit: SearchHit }) {
  const { task } = hit;
  return (
    <li className="hit">
      <article aria-label={task.summary || task.id}>
        <h3 className="hit-title">
          <Link to={`/handoffs/${encodeURIComponent(task.id)}`}>{task.summary || task.id}</Link>
        </h3>
        <p className="hit-meta">
          {task.sender.handle} → {task.recipient.handle} · {intentLabel(task.intent)} · <StateBadge state={task.state} /> · <TimeStamp at={task.created_at} />
        </p>
        {hit.highlights.length > 0 && (
          <ul className="highlights" aria-label="Matches">
            {hit.highlights.map((highlight, index) => (
              <li key={index}>
                <span className="highlight-source">{sourceLabel(highlight)}:</span> <HighlightedText fragments={highlight.fragments} />
              </li>
            ))}
          </ul>
        )}
      </article>
    </li>
  );
}
