import { RelayError } from '@app/contracts';
import { validateTypedArtifact } from './artifact-rules';

function fieldOf(run: () => void): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(RelayError);
    expect((error as RelayError).reason).toBe('invalid_params');
    return (error as RelayError).data?.field as string;
  }
}

describe('typed artifacts', () => {
  it('accepts each seed type with its required fields', () => {
    expect(fieldOf(() => validateTypedArtifact('file_diff', { path: 'a.py', diff: '@@' }, 'artifacts.0'))).toBeUndefined();
    expect(fieldOf(() => validateTypedArtifact('file_ref', { path: 'a.py', line_start: 1, line_end: 4 }, 'artifacts.0'))).toBeUndefined();
    expect(fieldOf(() => validateTypedArtifact('test_command', { command: 'npm test' }, 'artifacts.0'))).toBeUndefined();
    expect(fieldOf(() => validateTypedArtifact('api_contract', { name: 'users', spec: 'GET /users' }, 'artifacts.0'))).toBeUndefined();
    expect(fieldOf(() => validateTypedArtifact('link', { url: 'https://example.com' }, 'artifacts.0'))).toBeUndefined();
  });

  it('names the missing, malformed or unknown field', () => {
    expect(fieldOf(() => validateTypedArtifact('file_diff', { path: 'a.py' }, 'artifacts.2'))).toBe('artifacts.2.diff');
    expect(fieldOf(() => validateTypedArtifact('file_diff', { path: '', diff: 'x' }, 'artifacts.0'))).toBe('artifacts.0.path');
    expect(fieldOf(() => validateTypedArtifact('file_ref', { path: 'a', line_start: -1 }, 'artifacts.0'))).toBe('artifacts.0.line_start');
    expect(fieldOf(() => validateTypedArtifact('link', { url: 'ftp://example.com' }, 'artifacts.0'))).toBe('artifacts.0.url');
    expect(fieldOf(() => validateTypedArtifact('test_command', { command: 'x', shell: 'bash' }, 'artifacts.0'))).toBe('artifacts.0.shell');
  });
});
