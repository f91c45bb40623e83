/** What is wrong with a policy text, and where (1-based) when that is known. */
export interface PolicyProblem {
  message: string;
  place: { line: number; column: number } | null;
}

/**
 * Checks the YAML syntax in the browser before sending, so a syntax error points at its line at
 * once. The parser is loaded on first use (a chunk of its own): only the trust editor needs it.
 */
export async function yamlSyntaxProblem(text: string): Promise<PolicyProblem | null> {
  const { parseDocument } = await import('yaml');
  const [error] = parseDocument(text).errors;
  if (!error) return null;
  const position = error.linePos?.[0];
  const message = error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
  return { message: `Invalid YAML: ${message}`, place: position ? { line: position.line, column: position.col } : null };
}
