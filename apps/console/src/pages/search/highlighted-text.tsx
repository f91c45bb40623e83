import type { HighlightFragment } from '../../api/types';

/** A highlight from its fragments: matches in `<mark>`, everything as text (never HTML from the server). */
export function HighlightedText({ fragments }: { fragments: HighlightFragment[] }) {
  return <>{fragments.map((fragment, index) => (fragment.match ? <mark key={index}>{fragment.text}</mark> : <span key={index}>{fragment.text}</span>))}</>;
}
