import { ConfigValidationError, loadConfig } from '@app/config';
import { McpConfig } from './mcp.config';

describe('McpConfig', () => {
  const key = { AGENTRELAY_API_KEY: 'ah_live_x' };

  it('leaves the channel off unless AGENTRELAY_CHANNEL turns it on', () => {
    expect(loadConfig(McpConfig, key).AGENTRELAY_CHANNEL).toBe(false);
    expect(loadConfig(McpConfig, { ...key, AGENTRELAY_CHANNEL: '1' }).AGENTRELAY_CHANNEL).toBe(true);
    expect(loadConfig(McpConfig, { ...key, AGENTRELAY_CHANNEL: 'true' }).AGENTRELAY_CHANNEL).toBe(true);
    expect(loadConfig(McpConfig, { ...key, AGENTRELAY_CHANNEL: '0' }).AGENTRELAY_CHANNEL).toBe(false);
  });

  it('refuses any other value of AGENTRELAY_CHANNEL, naming the key', () => {
    expect(() => loadConfig(McpConfig, { ...key, AGENTRELAY_CHANNEL: 'yes' })).toThrow(ConfigValidationError);
    expect(() => loadConfig(McpConfig, { ...key, AGENTRELAY_CHANNEL: 'yes' })).toThrow(/AGENTRELAY_CHANNEL must be 1 or 0/);
  });
});
