import { parse } from 'yaml';

export const YAML_CONTENT_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];

/** A YAML body that did not parse; the route answers 400 naming the problem. */
export class UnparseableYaml {
  constructor(readonly detail: string) {}
}

/** Parses a YAML request body; a syntax error becomes an UnparseableYaml value, not a thrown error. */
export function parseYamlBody(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return parse(text, { prettyErrors: false, maxAliasCount: 50 });
  } catch (error) {
    return new UnparseableYaml((error as Error).message.split('\n')[0]);
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
