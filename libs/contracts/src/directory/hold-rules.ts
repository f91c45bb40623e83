import { z } from 'zod';
import { ARTIFACT_TYPES, INTENTS, type ArtifactType, type Intent } from '../tasks/task.model';
import { orgOf } from './handle';
import { compilePathGlob, compileSenderPattern, MatchBudget, wildcardMatches, type CompiledPattern } from './wildcard-match';

/**
 * Hold rules of a recipient's trust policy (docs/decisions/0024-held-handoffs.md): a handoff that
 * a rule matches is held for a person's approval instead of being delivered. Described once here:
 * the type, the check of what an admin writes, and the matching are all derived from this file.
 */

/** A sender pattern: a handle, `*@org`, or a handle with `*` wildcards (`ci-*@acme`, `*@*`). */
const SENDER_PATTERN = /^[a-z0-9*][a-z0-9._*-]{0,127}@[a-z0-9*][a-z0-9.*-]{0,126}$/;

export const HOLD_RULE_LIMITS = {
  rulesPerPolicy: 50,
  entriesPerList: 100,
  nameChars: 100,
  pathPatternChars: 500,
  /** `*`, `**` and `?` in one path glob, and `*` in one sender pattern: each can keep a place of the match open. */
  pathPatternWildcards: 16,
  senderPatternWildcards: 8,
  /**
   * What one decision checks of a handoff: up to `pathsPerHandoff` distinct paths of at most
   * `pathChars` characters, in at most `matchStepsPerDecision` steps of the matcher. A handoff past
   * any of these is taken as matching every rule that names senders or paths (held, or its tool
   * prompts given to people): what cannot be checked is decided by a person.
   */
  pathsPerHandoff: 500,
  pathChars: 1024,
  matchStepsPerDecision: 5_000_000,
  /** A held handoff expires (denied, the sender told) after this long unless a rule says otherwise. */
  defaultExpiresAfterMinutes: 24 * 60,
  maxExpiresAfterMinutes: 30 * 24 * 60,
  /** The deepest chain depth a rule may name. */
  maxChainDepth: 1000,
} as const;

/** The wildcards of a glob or sender pattern: each `?`, and each run of `*` (a `**` is one). */
function wildcardCount(pattern: string): number {
  return pattern.match(/\*+|\?/g)?.length ?? 0;
}

const list = <T extends z.ZodType>(item: T) => z.array(item).min(1).max(HOLD_RULE_LIMITS.entriesPerList).optional();

/** What a rule matches a handoff on: every condition it states must hold (a rule stating none matches every handoff). */
const HANDOFF_CONDITIONS = {
  /** Named in the held task's reason, the audit and the approvers' notification. */
  name: z.string().trim().min(1).max(HOLD_RULE_LIMITS.nameChars),
  /** Senders it applies to (any sender when omitted). */
  senders: list(
    z
      .string()
      .trim()
      .toLowerCase()
      .regex(SENDER_PATTERN, 'a sender is a handle, *@org or a handle pattern with * (ci-*@acme)')
      .refine(
        (pattern) => wildcardCount(pattern) <= HOLD_RULE_LIMITS.senderPatternWildcards,
        `a sender pattern has at most ${HOLD_RULE_LIMITS.senderPatternWildcards} wildcards (*)`,
      ),
  ),
  /** Only senders whose org is not the recipient's. */
  outside_org: z.boolean().optional(),
  intents: list(z.enum(INTENTS)),
  /** The handoff carries an artifact of one of these kinds. */
  artifact_kinds: list(z.enum(ARTIFACT_TYPES)),
  /**
   * A path the handoff would touch matches one of these globs (`*` within a path segment, `**`
   * across segments): a file_diff's path and the files its diff names, a file_ref's path, and the
   * proposed action's target files.
   */
  paths: list(
    z
      .string()
      .trim()
      .min(1)
      .max(HOLD_RULE_LIMITS.pathPatternChars)
      .refine(
        (glob) => wildcardCount(glob) <= HOLD_RULE_LIMITS.pathPatternWildcards,
        `a path glob has at most ${HOLD_RULE_LIMITS.pathPatternWildcards} wildcards (*, ** or ?)`,
      ),
  ),
  /** The person who decides must not be the one who owns the sending agent. */
  four_eyes: z.boolean().optional(),
  /** Only handoffs at least this deep in a chain (docs/chains.md; a root has depth 0). */
  min_depth: z.number().int().min(1).max(HOLD_RULE_LIMITS.maxChainDepth).optional(),
};

export const HOLD_RULE_SCHEMA = z
  .object({
    ...HANDOFF_CONDITIONS,
    expires_after_minutes: z.number().int().min(1).max(HOLD_RULE_LIMITS.maxExpiresAfterMinutes).optional(),
  })
  .strict();

export const HOLD_RULES_SCHEMA = z.array(HOLD_RULE_SCHEMA).max(HOLD_RULE_LIMITS.rulesPerPolicy);

/**
 * A tool-prompt rule of a recipient's trust policy (docs/decisions/0031-tool-prompts-answered-by-people.md):
 * the tool prompts of a handoff it matches (a coding agent run for it asks before a tool) are
 * answered by people with the approver role, not by the handoff's sender.
 */
export const TOOL_PROMPT_RULE_SCHEMA = z.object(HANDOFF_CONDITIONS).strict();

export const TOOL_PROMPT_RULES_SCHEMA = z.array(TOOL_PROMPT_RULE_SCHEMA).max(HOLD_RULE_LIMITS.rulesPerPolicy);

export type ToolPromptRule = z.infer<typeof TOOL_PROMPT_RULE_SCHEMA>;

export type HoldRule = z.infer<typeof HOLD_RULE_SCHEMA>;

/** What is wrong with a list of rules by `schema`, naming the place (`[1].senders[0]: …`), or null; a name used twice is refused too. */
function rulesProblem(schema: typeof HOLD_RULES_SCHEMA | typeof TOOL_PROMPT_RULES_SCHEMA, value: unknown): string | null {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const place = issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
    return `${place}: ${issue.message}`;
  }
  const names = new Set<string>();
  for (const [index, rule] of parsed.data.entries()) {
    if (names.has(rule.name)) return `[${index}].name: another rule is already named ${JSON.stringify(rule.name)}`;
    names.add(rule.name);
  }
  return null;
}

/**
 * What is wrong with a list of hold rules, in words that name the place (`[1].senders[0]: …`), or
 * null when HOLD_RULES_SCHEMA accepts it; a rule name used twice is refused too (the reason, the
 * audit and the approvers name a rule by it).
 */
export function holdRulesProblem(value: unknown): string | null {
  return rulesProblem(HOLD_RULES_SCHEMA, value);
}

/** What is wrong with a list of tool-prompt rules, as holdRulesProblem says it, or null. */
export function toolPromptRulesProblem(value: unknown): string | null {
  return rulesProblem(TOOL_PROMPT_RULES_SCHEMA, value);
}

/** What of a handoff the rules look at. */
export interface HoldCandidate {
  sender: string;
  recipient: string;
  intent: Intent;
  artifacts: ReadonlyArray<{ type?: ArtifactType; fields?: Record<string, unknown> }>;
  proposedAction?: { target_files: readonly string[]; suggested_diff?: string | null } | null;
  /** The handoff's depth in its chain (0, a root, when absent). */
  depth?: number;
}

export interface HoldDecision {
  rule: string;
  /** Why, in words the sender and the approvers read. */
  reason: string;
  expiresAfterMinutes: number;
  fourEyes: boolean;
}

const compiledPatterns = new Map<string, CompiledPattern>();

/** A compiled pattern, kept for the next decision (rules are few and come back with every handoff to their recipient). */
function compiledOnce(kind: 'path' | 'sender', pattern: string): CompiledPattern {
  const key = `${kind}:${pattern}`;
  let compiled = compiledPatterns.get(key);
  if (!compiled) {
    if (compiledPatterns.size >= 10_000) compiledPatterns.clear();
    compiled = kind === 'path' ? compilePathGlob(pattern) : compileSenderPattern(pattern);
    compiledPatterns.set(key, compiled);
  }
  return compiled;
}

/** A path as the globs read it: a leading `./` or `/`, then a diff's `a/` or `b/`, dropped. */
function normalizedPath(path: string): string {
  return path.replace(/^\.?\//, '').replace(/^[ab]\//, '');
}

/** `*` matches within the part it is in (never `@`); the rest literally. Null when the budget ran out. */
export function senderMatches(pattern: string, sender: string, budget = new MatchBudget(HOLD_RULE_LIMITS.matchStepsPerDecision)): boolean | null {
  return wildcardMatches(compiledOnce('sender', pattern), sender, budget);
}

/** A path glob: `**` any run of segments (`**\/` also none), `*` within a segment, `?` one character. Null when the budget ran out. */
export function pathMatches(glob: string, path: string, budget = new MatchBudget(HOLD_RULE_LIMITS.matchStepsPerDecision)): boolean | null {
  return wildcardMatches(compiledOnce('path', glob), normalizedPath(path), budget);
}

/** The files a unified diff names in its `---` / `+++` headers (not /dev/null). */
export function diffPaths(diff: string): string[] {
  const paths = new Set<string>();
  for (const line of diff.split('\n')) {
    const header = /^(?:\+\+\+|---) (?:[ab]\/)?([^\t\n]+)/.exec(line);
    if (header && header[1].trim() !== '/dev/null') paths.add(header[1].trim());
  }
  return [...paths];
}

/** Every path a handoff would touch, as far as its content says. */
export function touchedPaths(candidate: HoldCandidate): string[] {
  const paths = new Set<string>();
  for (const artifact of candidate.artifacts) {
    const fields = artifact.fields ?? {};
    if ((artifact.type === 'file_diff' || artifact.type === 'file_ref') && typeof fields.path === 'string') paths.add(fields.path);
    if (artifact.type === 'file_diff' && typeof fields.diff === 'string') for (const path of diffPaths(fields.diff)) paths.add(path);
  }
  for (const path of candidate.proposedAction?.target_files ?? []) paths.add(path);
  if (typeof candidate.proposedAction?.suggested_diff === 'string') for (const path of diffPaths(candidate.proposedAction.suggested_diff)) paths.add(path);
  return [...paths];
}

/** What a decision checks a handoff's paths against, or null when it has more (or longer) paths than one decision checks. */
function checkablePaths(candidate: HoldCandidate): string[] | null {
  const paths = touchedPaths(candidate);
  if (paths.length > HOLD_RULE_LIMITS.pathsPerHandoff || paths.some((path) => path.length > HOLD_RULE_LIMITS.pathChars)) return null;
  return paths;
}

/** What one decision reads of a handoff, worked out once for all the rules. */
interface Decision {
  candidate: HoldCandidate;
  paths: string[] | null;
  budget: MatchBudget;
}

function decision(candidate: HoldCandidate): Decision {
  return { candidate, paths: checkablePaths(candidate), budget: new MatchBudget(HOLD_RULE_LIMITS.matchStepsPerDecision) };
}

/**
 * Whether one rule matches: every condition it states holds (a rule stating none matches every
 * handoff). A sender or path condition that cannot be checked within the decision's limits
 * (HOLD_RULE_LIMITS) counts as holding.
 */
function ruleMatches(rule: HoldRule | ToolPromptRule, { candidate, paths, budget }: Decision): boolean {
  if (rule.senders && !rule.senders.some((pattern) => senderMatches(pattern, candidate.sender, budget) !== false)) return false;
  if (rule.outside_org && orgOf(candidate.sender) === orgOf(candidate.recipient)) return false;
  if (rule.intents && !rule.intents.includes(candidate.intent)) return false;
  if (rule.artifact_kinds && !candidate.artifacts.some((artifact) => artifact.type !== undefined && rule.artifact_kinds?.includes(artifact.type))) return false;
  if (rule.min_depth !== undefined && (candidate.depth ?? 0) < rule.min_depth) return false;
  if (rule.paths && paths && !rule.paths.some((glob) => paths.some((path) => pathMatches(glob, path, budget) !== false))) return false;
  return true;
}

/** The first rule that holds the handoff, or null when it is delivered at once. */
export function decideHold(rules: readonly HoldRule[], candidate: HoldCandidate): HoldDecision | null {
  const facts = decision(candidate);
  const rule = rules.find((entry) => ruleMatches(entry, facts));
  if (!rule) return null;
  return {
    rule: rule.name,
    reason: `Held for approval by ${candidate.recipient}'s trust policy (rule "${rule.name}")`,
    expiresAfterMinutes: rule.expires_after_minutes ?? HOLD_RULE_LIMITS.defaultExpiresAfterMinutes,
    fourEyes: rule.four_eyes === true,
  };
}

/** Who answers the tool prompts of a handoff a tool-prompt rule matched: people with the approver role. */
export interface ToolPromptDecision {
  rule: string;
  fourEyes: boolean;
}

/** The first tool-prompt rule that matches the handoff, or null when its sender answers its tool prompts. */
export function decideToolPrompts(rules: readonly ToolPromptRule[], candidate: HoldCandidate): ToolPromptDecision | null {
  const facts = decision(candidate);
  const rule = rules.find((entry) => ruleMatches(entry, facts));
  return rule ? { rule: rule.name, fourEyes: rule.four_eyes === true } : null;
}
