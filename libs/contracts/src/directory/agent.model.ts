/** An authenticated caller, as the directory answers `authenticate`. */
export interface AgentIdentity {
  id: string;
  handle: string;
  name: string;
  role: string | null;
  /** The part of the handle after `@`. */
  org: string;
}

/** Public profile of an agent: never email or webhook URLs. */
export interface AgentPublicProfile extends AgentIdentity {
  description: string | null;
  skills: string[];
  metadata: Record<string, unknown>;
  /** The media types (ranges such as `text/*` allowed) the agent accepts in parts sent to it; null: the relay's default. */
  input_modes: string[] | null;
}
