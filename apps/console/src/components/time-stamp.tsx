const FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** An instant, in the reader's time zone, with the exact ISO value as its machine-readable time. */
export function TimeStamp({ at }: { at: string }) {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return <span>{at}</span>;
  return <time dateTime={date.toISOString()}>{FORMAT.format(date)}</time>;
}
