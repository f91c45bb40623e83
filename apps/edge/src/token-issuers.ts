import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AGENT_LIMITS } from '@app/contracts';

/** The claim that names the agent's handle in a token when an issuer names no other. */
export const DEFAULT_HANDLE_CLAIM = 'agentrelay_handle';

/** An identity provider whose JWTs authenticate agents (one entry of `RELAY_OIDC_ISSUERS`). */
export interface TokenIssuer {
  /** The `iss` of its tokens, and where its discovery document is (`<issuer>/.well-known/openid-configuration`). */
  issuer: string;
  /** The `aud` a token must carry (any one of them). */
  audiences: string[];
  handleClaim: string;
}

const issuerEntry = z
  .object({
    issuer: z
      .url({ protocol: /^https?$/, error: 'issuer must be an http(s) URL' })
      .max(AGENT_LIMITS.tokenIssuerChars, { error: `issuer must be at most ${AGENT_LIMITS.tokenIssuerChars} characters` }),
    audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(20)], { error: 'audience must be a string or a list of strings' }),
    handle_claim: z
      .string()
      .regex(/^[A-Za-z0-9_.:/-]{1,200}$/, { error: 'handle_claim must be a claim name (letters, digits, _ . : / -)' })
      .optional(),
  })
  .strict();

const issuerList = z.array(issuerEntry).max(20, { error: 'at most 20 issuers' });

/**
 * `RELAY_OIDC_ISSUERS`: a JSON list of `{issuer, audience, handle_claim?}`, or the path of a file
 * that holds one. Throws an Error that says what is wrong (at startup, through EdgeConfig).
 */
export function parseTokenIssuers(value: string | undefined): TokenIssuer[] {
  if (value === undefined || value.trim() === '') return [];
  const text = value.trim().startsWith('[') ? value : readIssuersFile(value.trim());
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`RELAY_OIDC_ISSUERS is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = issuerList.safeParse(json);
  if (!parsed.success) {
    const problem = parsed.error.issues[0];
    const where = problem.path.length > 0 ? `[${problem.path.join('].')}` : '';
    throw new Error(`RELAY_OIDC_ISSUERS${where}: ${problem.message}`);
  }
  const issuers = parsed.data.map((entry) => ({
    issuer: entry.issuer,
    audiences: Array.isArray(entry.audience) ? entry.audience : [entry.audience],
    handleClaim: entry.handle_claim ?? DEFAULT_HANDLE_CLAIM,
  }));
  const seen = new Set<string>();
  for (const { issuer } of issuers) {
    if (seen.has(issuer)) throw new Error(`RELAY_OIDC_ISSUERS: the issuer ${issuer} is listed twice`);
    seen.add(issuer);
  }
  return issuers;
}

function readIssuersFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`RELAY_OIDC_ISSUERS is neither a JSON list nor a readable file (${(error as NodeJS.ErrnoException).code ?? 'unreadable'}: ${path})`, {
      cause: error,
    });
  }
}

/** The problem with a `RELAY_OIDC_ISSUERS` value, or undefined when it is usable. */
export function tokenIssuersProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'RELAY_OIDC_ISSUERS must be a JSON list or a file path';
  try {
    parseTokenIssuers(value);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
