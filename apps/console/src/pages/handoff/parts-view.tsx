import type { MessageView } from '../../api/types';

/** Message or artifact parts as text: text as written, data as JSON, files by name. */
export function PartsView({ parts }: { parts: MessageView['parts'] }) {
  if (parts.length === 0) return null;
  return (
    <div className="parts">
      {parts.map((part, index) => {
        if (part.kind === 'text')
          return (
            <p key={index} className="part-text">
              {part.text}
            </p>
          );
        if (part.kind === 'data')
          return (
            <pre key={index} className="part-data">
              {JSON.stringify(part.data, null, 2)}
            </pre>
          );
        return (
          <p key={index} className="part-file">
            File: {part.file.name ?? part.file.uri ?? 'unnamed'}
            {part.file.mime_type ? ` (${part.file.mime_type})` : ''}
          </p>
        );
      })}
    </div>
  );
}
