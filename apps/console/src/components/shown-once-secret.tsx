import { useId, useState } from 'react';

/** A secret the relay shows once (an API key, a webhook secret), readable and with a copy button. */
export function ShownOnceSecret({ label, value }: { label: string; value: string }) {
  const id = useId();
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  return (
    <div className="secret">
      <label htmlFor={id}>{label}</label>
      <div className="secret-row">
        <input id={id} readOnly value={value} spellCheck={false} onFocus={(event) => event.currentTarget.select()} />
        <button
          type="button"
          className="button secondary"
          onClick={() => {
            navigator.clipboard.writeText(value).then(
              () => setCopied('yes'),
              () => setCopied('failed'),
            );
          }}
        >
          Copy {label.toLowerCase()}
        </button>
      </div>
      <p role="status" className="hint">
        {copied === 'yes' ? 'Copied.' : copied === 'failed' ? 'The browser refused to copy; select the text and copy it.' : ''}
      </p>
    </div>
  );
}
