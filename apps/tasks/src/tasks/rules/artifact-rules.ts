import { RelayError, TASK_LIMITS, TYPED_ARTIFACT_FIELDS, type ArtifactFieldKind, type ArtifactInput, type ArtifactType } from '@app/contracts';

function fits(kind: ArtifactFieldKind, value: unknown): boolean {
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

const DESCRIBE: Record<ArtifactFieldKind, string> = {
  string: 'a non-empty string',
  url: 'an http(s) URL',
  integer: 'a non-negative integer',
  'string[]': 'an array of strings',
};

/** Validates a typed artifact's fields (`file_diff` needs `path` and `diff`, …); `field` names the offender. */
export function validateTypedArtifact(type: ArtifactType, fields: Record<string, unknown>, field: string): void {
  const rules: Record<string, { kind: ArtifactFieldKind; required: boolean }> = TYPED_ARTIFACT_FIELDS[type];
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
