import { TASK_LIMITS } from '@app/contracts/model';

/** What a worker's command prints, line by line, and how its output is cut to the relay's limits. */

/** A stdout line starting with this is a progress update, not output (`progress: compiling…`). */
export const PROGRESS_MARKER = 'progress: ';
/** A stdout line starting with this asks the sender a question (`input-required: Which branch?`). */
export const INPUT_REQUIRED_MARKER = 'input-required: ';
/** The exit code with which a command says it needs input from the sender. */
export const INPUT_REQUIRED_EXIT_CODE = 3;

/**
 * A result summary or question at most this long: a text part's limit, and at most this many bytes
 * as JSON, so that the message (whose first text part a reply carries three times) stays far within
 * the relay's message size whatever the characters.
 */
export const TEXT_MAX_CHARS = TASK_LIMITS.textPartChars;
export const TEXT_MAX_JSON_BYTES = 256 * 1024;

/** How much of stdout a run keeps while the command prints (the newest part). */
const KEPT_OUTPUT_CHARS = 2 * TEXT_MAX_CHARS;
/** How much of stderr a run keeps, and how many of its last lines a failure names. */
const KEPT_STDERR_CHARS = 64 * 1024;
export const STDERR_TAIL_LINES = 20;

function jsonBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text));
}

/** Cuts without splitting a surrogate pair. */
function sliceTail(text: string, chars: number): string {
  let start = Math.max(0, text.length - chars);
  const code = text.charCodeAt(start);
  if (code >= 0xdc00 && code <= 0xdfff) start += 1;
  return text.slice(start);
}

/**
 * The end of `text` within `maxChars` characters and `maxJsonBytes` bytes as a JSON string, with a
 * first line saying how much was cut when it had to be.
 */
export function keepTail(text: string, maxChars: number = TEXT_MAX_CHARS, maxJsonBytes: number = TEXT_MAX_JSON_BYTES): string {
  if (text.length <= maxChars && jsonBytes(text) <= maxJsonBytes) return text;
  const note = (cut: number): string => `[… ${cut} earlier characters cut …]\n`;
  let keep = Math.min(text.length, maxChars - note(text.length).length);
  let kept = sliceTail(text, keep);
  while (keep > 0 && jsonBytes(note(text.length - kept.length) + kept) > maxJsonBytes) {
    keep = Math.floor(keep * Math.min(0.95, maxJsonBytes / jsonBytes(kept)));
    kept = sliceTail(text, keep);
  }
  return note(text.length - kept.length) + kept;
}

/** The last `lines` lines of `text`, within `maxChars` (the newest kept). */
export function lastLines(text: string, lines: number, maxChars: number): string {
  const all = text.replace(/\s+$/, '').split('\n');
  return keepTail(all.slice(-lines).join('\n'), maxChars, Number.MAX_SAFE_INTEGER);
}

export type StdoutLine = { kind: 'progress'; text: string } | { kind: 'question'; text: string } | { kind: 'output' };

/** Sorts one stdout line (without its newline). */
export function classifyLine(line: string): StdoutLine {
  if (line.startsWith(PROGRESS_MARKER)) return { kind: 'progress', text: line.slice(PROGRESS_MARKER.length).trim() };
  if (line.startsWith(INPUT_REQUIRED_MARKER)) return { kind: 'question', text: line.slice(INPUT_REQUIRED_MARKER.length).trim() };
  return { kind: 'output' };
}

/** A growing text that keeps only its newest `maxChars` characters (and says so). */
export class BoundedText {
  private text = '';
  private dropped = 0;

  constructor(private readonly maxChars: number) {}

  append(chunk: string): void {
    this.text += chunk;
    if (this.text.length > this.maxChars * 2) this.compact();
  }

  toString(): string {
    this.compact();
    return this.dropped > 0 ? `[… ${this.dropped} earlier characters cut …]\n${this.text}` : this.text;
  }

  private compact(): void {
    if (this.text.length <= this.maxChars) return;
    const kept = sliceTail(this.text, this.maxChars);
    this.dropped += this.text.length - kept.length;
    this.text = kept;
  }
}

/** What a run's stdout and stderr came to, sorted as the worker reads them. */
export class RunOutput {
  private readonly stdout = new BoundedText(KEPT_OUTPUT_CHARS);
  private readonly stderr = new BoundedText(KEPT_STDERR_CHARS);
  private readonly questions: string[] = [];

  /** Takes one stdout line; answers the progress text when it is a progress line. */
  stdoutLine(line: string): string | null {
    const sorted = classifyLine(line);
    if (sorted.kind === 'progress') return sorted.text;
    if (sorted.kind === 'question') this.questions.push(sorted.text);
    else this.stdout.append(`${line}\n`);
    return null;
  }

  stderrChunk(chunk: string): void {
    this.stderr.append(chunk);
  }

  /** The output (stdout without progress and question lines), trimmed, cut to the relay's limits. */
  result(): string {
    return keepTail(this.stdout.toString().trim());
  }

  /** The question of `input-required:` lines, else the output; null when there is neither. */
  question(): string | null {
    const text = this.questions.length > 0 ? this.questions.join('\n') : this.stdout.toString().trim();
    return text === '' ? null : keepTail(text);
  }

  /** Whether the command wrote an `input-required:` line. */
  get asked(): boolean {
    return this.questions.length > 0;
  }

  stderrTail(): string {
    return lastLines(this.stderr.toString(), STDERR_TAIL_LINES, 3000);
  }
}

/** A fail reason within the relay's limit (`TASK_LIMITS.reasonChars`), keeping the headline and the newest detail. */
export function failReason(headline: string, detail: string): string {
  const text = detail.trim() === '' ? headline : `${headline}\n${detail.trim()}`;
  if (text.length <= TASK_LIMITS.reasonChars) return text;
  return `${headline}\n${keepTail(detail.trim(), TASK_LIMITS.reasonChars - headline.length - 1, Number.MAX_SAFE_INTEGER)}`;
}
