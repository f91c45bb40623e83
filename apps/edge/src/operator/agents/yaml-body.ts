import { parse } from 'yaml';

export const YAML_CONTENT_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];

/** A YAML body that did not parse; the route answers 400 naming the problem and, when known, where it is (1-based). */
export class UnparseableYaml {
  constructor(
    readonly detail: string,
    readonly line?: number,
    readonly column?: number,
  ) {}
}

/** The 1-based line and column of a character offset in `text`. */
function placeOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: before.length - lineStart + 1 };
}

/** Parses a YAML request body; a syntax error becomes an UnparseableYaml value, not a thrown error. */
export function parseYamlBody(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return parse(text, { prettyErrors: false, maxAliasCount: 50 });
  } catch (error) {
    const offset = (error as { pos?: [number, number] }).pos?.[0];
    const place = typeof offset === 'number' ? placeOf(text, offset) : undefined;
    return new UnparseableYaml((error as Error).message.split('\n')[0], place?.line, place?.column);
  }
}

interface ContentTypeParserHost {
  hasContentTypeParser(contentType: string): boolean;
  addContentTypeParser(
    contentType: string[],
    options: { parseAs: 'string' },
    parser: (request: unknown, body: string, done: (error: Error | null, value?: unknown) => void) => void,
  ): void;
}

/** Teaches Fastify to read `application/yaml` bodies (the `trust.yaml` format). */
export function registerYamlBodyParser(fastify: ContentTypeParserHost): void {
  if (fastify.hasContentTypeParser('application/yaml')) return;
  fastify.addContentTypeParser(YAML_CONTENT_TYPES, { parseAs: 'string' }, (_request, body, done) => done(null, parseYamlBody(body)));
}
