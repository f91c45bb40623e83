import { programName } from './program-name';

describe('programName', () => {
  it('names the npm script when run through npm run cli', () => {
    expect(programName({ npm_lifecycle_event: 'cli' }, '/src/agentrelay/dist/apps/cli/src/main.js', '/src/agentrelay')).toBe('npm run cli --');
  });

  it('names npx when run through npm exec', () => {
    expect(programName({ npm_command: 'exec' }, '/src/agentrelay/node_modules/.bin/agentrelay', '/src/agentrelay')).toBe('npx agentrelay');
  });

  it('names agentrelay for an installed or linked bin', () => {
    expect(programName({}, '/usr/local/bin/agentrelay', '/home/kim/project')).toBe('agentrelay');
  });

  it("names the bin's path in a clone, relative to the working directory when below it", () => {
    expect(programName({}, '/src/agentrelay/bin/agentrelay.mjs', '/src/agentrelay')).toBe('./bin/agentrelay.mjs');
    expect(programName({}, '/src/agentrelay/bin/agentrelay.mjs', '/home/kim/project')).toBe('/src/agentrelay/bin/agentrelay.mjs');
    expect(programName({}, '/src/agentrelay/dist/apps/cli/src/main.js', '/src/agentrelay')).toBe('node ./dist/apps/cli/src/main.js');
  });

  it('falls back to agentrelay when it cannot tell', () => {
    expect(programName({}, undefined, '/')).toBe('agentrelay');
  });
});
