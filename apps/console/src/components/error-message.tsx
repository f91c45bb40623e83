import { ApiError } from '../api/api-error';

/** An error of a query or a change, said in one line. */
export function ErrorMessage({ error }: { error: unknown }) {
  const text = error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error);
  return (
    <p role="alert" className="error">
      {text}
    </p>
  );
}
