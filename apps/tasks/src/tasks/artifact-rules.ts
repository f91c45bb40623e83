import { RelayError, TASK_LIMITS, type ArtifactInput, type ArtifactType } from '@app/contracts';

type FieldKind = 'string' | 'url' | 'integer' | 'string[]';

interface FieldRule {
  kind: FieldKind;
  required: boolean;
}

/** The fields of each seed artifact type; anything else is refused. */
const ARTIFACT_FIELDS: Record<ArtifactType, Record<string, FieldRule>> = {
  file_diff: { path: { kind: 'string', required: true }, diff: { kind: 'string', required: true }, description: { kind: 'string', required: false } },
  file_ref: {
    path: { kind: 'string', required: true },
    line_start: { kind: 'integer', required: false },
    line_end: { kind: 'integer', required: false },
    ref: { kind: 'string', required: false },
    description: { kind: 'string', required: false },
  },
  test_command: {
    command: { kind: 'string', required: true },
    cwd: { kind: 'string', required: false },
    expected: { kind: 'string', required: false },
    description: { kind: 'string', required: false },
  },
  api_contract: {
    name: { kind: 'string', required: true },
    spec: { kind: 'string', required: true },
    format: { kind: 'string', required: false },
    endpoints: { kind: 'string[]', required: false },
    description: { kind: 'string', required: false },
  },
  link: { url: { kind: 'url', required: true }, title: { kind: 'string', required: false }, description: { kind: 'string', required: false } },
};

function fits(kind: FieldKind, value: unknown): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string' && value.trim().length > 0 && value.length <= TASK_LIMITS.artifactFieldChars;
    case 'url':
      if (typeof value !== 'string' || value.length > TASK_LIMITS.artifactUrlChars) return false;
      try {
        const url = new URL(value);
        return url.protocol === 'http:' || url.protocol === 'https:';
      } catch {
        return false;
      }
    case 'integer':
      return Number.isInteger(value) && (value as number) >= 0;
    case 'string[]':
      return (
        Array.isArray(value) &&
        value.length <= TASK_LIMITS.artifactListItems &&
        value.every((item) => typeof item === 'string' && item.length <= TASK_LIMITS.artifactListItemChars)
      );
  }
}

const DESCRIBE: Record<FieldKind, string> = {
  string: 'a non-empty string',
  url: 'an http(s) URL',
  integer: 'a non-negative integer',
  'string[]': 'an array of strings',
};

/** Validates a typed artifact's fields (`file_diff` needs `path` and `diff`, …); `field` names the offender. */
export function validateTypedArtifact(type: ArtifactType, fields: Record<string, unknown>, field: string): void {
  const rules = ARTIFACT_FIELDS[type];
  for (const [name, rule] of Object.entries(rules)) {
    const value = fields[name];
    if (value === undefined || value === null) {
      if (rule.required) throw new RelayError('invalid_params', `${field}.${name} is required for a ${type} artifact`, { field: `${field}.${name}` });
      continue;
    }
    if (!fits(rule.kind, value)) {
      throw new RelayError('invalid_params', `${field}.${name} must be ${DESCRIBE[rule.kind]}`, { field: `${field}.${name}` });
    }
  }
  const unknown = Object.keys(fields).find((name) => !(name in rules));
  if (unknown !== undefined) {
    throw new RelayError('invalid_params', `${field}.${unknown} is not a field of a ${type} artifact (allowed: ${Object.keys(rules).join(', ')})`, {
      field: `${field}.${unknown}`,
    });
  }
}

/** Checks the fields of every typed artifact of a request. */
export function validateArtifactInputs(artifacts: ArtifactInput[] | undefined): void {
  (artifacts ?? []).forEach((artifact, index) => {
    if (artifact.type !== undefined) validateTypedArtifact(artifact.type, artifact.fields ?? {}, `artifacts.${index}`);
  });
}
