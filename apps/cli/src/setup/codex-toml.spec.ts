import { enableHooksFeature, parseStringArray, parseStringTable, scanToml, TomlEditError, upsertMcpServer } from './codex-toml';

const SERVER = {
  command: 'node',
  args: ['/opt/agentrelay/bin/agentrelay-mcp.mjs'],
  env: { RELAY_URL: 'http://127.0.0.1:8080' },
  envVars: ['AGENTRELAY_API_KEY'],
};

describe('the config.toml scanner', () => {
  it('reads tables and keys, and where multi-line arrays and strings end', () => {
    const entries = scanToml('a = 1\n[t]\nb = [\n  "x", # ]\n  "y",\n]\nc = """\n[not a table]\n"""\n[[u]]\nd = 2\n[[u]]\nd = 3\n');
    expect(entries.map((entry) => (entry.kind === 'header' ? `[${entry.table}]` : `${entry.table}:${entry.key}`))).toEqual([
      ':a',
      '[t]',
      't:b',
      't:c',
      '[u]',
      'u:d',
      '[u]',
      'u:d',
    ]);
  });

  it.each([
    ['a table defined twice', '[t]\n[t]\n'],
    ['a key defined twice', 'a = 1\na = 2\n'],
    ['an unterminated string', 'a = "x\n'],
    ['an array that never ends', 'a = [1,\n2\n'],
    ['a line that is neither', 'just words\n'],
  ])('refuses %s', (_, text) => {
    expect(() => scanToml(text)).toThrow(TomlEditError);
  });

  it('reads inline tables and arrays of strings', () => {
    expect(parseStringTable('{ A = "x", "B C" = \'y\' }')).toEqual({ A: 'x', 'B C': 'y' });
    expect(parseStringArray('["A", \'B\']')).toEqual(['A', 'B']);
    expect(() => parseStringTable('{ A = 1 }')).toThrow(TomlEditError);
    expect(() => parseStringArray('[1, 2]')).toThrow(TomlEditError);
  });
});

describe('upsertMcpServer', () => {
  it('appends the server table to a file with other servers, keeping every line', () => {
    const before = '# mine\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n';
    const edit = upsertMcpServer(before, 'agentrelay', SERVER);
    expect(edit.text).toBe(
      `${before}\n[mcp_servers.agentrelay]\ncommand = "node"\nargs = ["/opt/agentrelay/bin/agentrelay-mcp.mjs"]\n` +
        'env = { RELAY_URL = "http://127.0.0.1:8080" }\nenv_vars = ["AGENTRELAY_API_KEY"]\n',
    );
    expect(edit.changes).toEqual(['added [mcp_servers.agentrelay]']);
    expect(upsertMcpServer(edit.text, 'agentrelay', SERVER)).toEqual({ text: edit.text, changes: [], notes: [] });
  });

  it('updates its own table in place, keeping its other keys and env variables and moving a literal key out of the file', () => {
    const before =
      '[mcp_servers.agentrelay]\ncommand = "old"\nstartup_timeout_sec = 20\nenv = { AGENTRELAY_API_KEY = "ah_live_secret", AGENTRELAY_SESSION_ID = "s1" }\n\n[other]\nx = 1\n';
    const edit = upsertMcpServer(before, 'agentrelay', SERVER);
    expect(edit.text).toBe(
      '[mcp_servers.agentrelay]\ncommand = "node"\nstartup_timeout_sec = 20\nenv = { AGENTRELAY_SESSION_ID = "s1", RELAY_URL = "http://127.0.0.1:8080" }\n' +
        'args = ["/opt/agentrelay/bin/agentrelay-mcp.mjs"]\nenv_vars = ["AGENTRELAY_API_KEY"]\n\n[other]\nx = 1\n',
    );
    expect(edit.text).not.toContain('ah_live_secret');
    expect(edit.notes[0]).toContain('removed the literal AGENTRELAY_API_KEY');
  });

  it('refuses forms it does not edit rather than define the server twice', () => {
    expect(() => upsertMcpServer('[mcp_servers]\nagentrelay = { command = "x" }\n', 'agentrelay', SERVER)).toThrow(TomlEditError);
    expect(() => upsertMcpServer('[mcp_servers.agentrelay.env]\nA = "1"\n', 'agentrelay', SERVER)).toThrow(TomlEditError);
    expect(upsertMcpServer('[mcp_servers.agentrelayx]\ncommand = "x"\n', 'agentrelay', SERVER).changes).toEqual(['added [mcp_servers.agentrelay]']);
  });
});

describe('enableHooksFeature', () => {
  it('adds hooks = true to [features], or the table when there is none', () => {
    expect(enableHooksFeature('[features]\nweb_search = true\n').text).toBe('[features]\nhooks = true\nweb_search = true\n');
    expect(enableHooksFeature('model = "o3"').text).toBe('model = "o3"\n\n[features]\nhooks = true\n');
  });

  it('leaves a flag that is already set, and says so when it turns hooks off', () => {
    expect(enableHooksFeature('[features]\ncodex_hooks = true\n')).toEqual({ text: '[features]\ncodex_hooks = true\n', changes: [], notes: [] });
    const off = enableHooksFeature('features.hooks = false\n');
    expect(off.changes).toEqual([]);
    expect(off.notes[0]).toContain('features.hooks = false');
  });
});
