import {
  parseInlinePushConfig,
  parsePushConfigListParams,
  parsePushConfigRefParams,
  parsePushConfigSetParams,
  renderPushConfig,
  renderPushConfigList,
  type PushConfigRecord,
} from './push-config';
import { invalidFieldOf } from './testing/invalid-field';

describe('push config params', () => {
  it('reads set in the v0.3 shape and in the flat v1.0 shape', () => {
    expect(
      parsePushConfigSetParams({
        taskId: 'T1',
        pushNotificationConfig: { id: 'cfg-03', url: 'https://client/hook', token: 'tok', authentication: { schemes: ['Bearer'], credentials: 'c' } },
      }),
    ).toEqual({ taskId: 'T1', config: { id: 'cfg-03', url: 'https://client/hook', token: 'tok', authentication: { schemes: ['Bearer'], credentials: 'c' } } });
    expect(parsePushConfigSetParams({ id: 'cfg-1', task_id: 'T1', url: 'http://127.0.0.1:9/hook', authentication: { scheme: 'Bearer' } })).toEqual({
      taskId: 'T1',
      config: { id: 'cfg-1', url: 'http://127.0.0.1:9/hook', authentication: { schemes: ['Bearer'] } },
    });
  });

  it('names bad fields', () => {
    expect(invalidFieldOf(() => parsePushConfigSetParams({ url: 'https://x' }))).toBe('taskId');
    expect(invalidFieldOf(() => parsePushConfigSetParams({ taskId: 'T', url: 'ftp://x' }))).toBe('params.url');
    expect(invalidFieldOf(() => parsePushConfigSetParams({ taskId: 'T', pushNotificationConfig: { url: 'https://x', authentication: { schemes: [] } } }))).toBe(
      'pushNotificationConfig.authentication',
    );
  });

  it('reads get/delete refs in both shapes', () => {
    expect(parsePushConfigRefParams({ id: 'T1', pushNotificationConfigId: 'cfg' }, true)).toEqual({ taskId: 'T1', configId: 'cfg' });
    expect(parsePushConfigRefParams({ id: 'T1' }, false)).toEqual({ taskId: 'T1' });
    expect(parsePushConfigRefParams({ taskId: 'T1', id: 'cfg' }, true)).toEqual({ taskId: 'T1', configId: 'cfg' });
    expect(invalidFieldOf(() => parsePushConfigRefParams({ id: 'T1' }, true))).toBe('pushNotificationConfigId');
    expect(parsePushConfigListParams({ id: 'T1' })).toEqual({ taskId: 'T1' });
    expect(parsePushConfigListParams({ taskId: 'T2', pageSize: 5 })).toEqual({ taskId: 'T2' });
  });

  it('reads the inline config of a send', () => {
    expect(parseInlinePushConfig({ taskPushNotificationConfig: { url: 'https://a/h' } })).toEqual({ url: 'https://a/h' });
    expect(parseInlinePushConfig({ pushNotificationConfig: { url: 'https://b/h', token: 't' } })).toEqual({ url: 'https://b/h', token: 't' });
    expect(parseInlinePushConfig({})).toBeUndefined();
  });
});

describe('push config rendering', () => {
  const record: PushConfigRecord = {
    id: 'cfg',
    task_id: 'T',
    url: 'https://h',
    token: 'tok',
    authentication: { schemes: ['Bearer'], credentials: '****cret' },
  };

  it('renders v0.3 nested and v1.0 flat', () => {
    expect(renderPushConfig(record, '0.3')).toEqual({
      taskId: 'T',
      pushNotificationConfig: { id: 'cfg', url: 'https://h', token: 'tok', authentication: { schemes: ['Bearer'], credentials: '****cret' } },
    });
    expect(renderPushConfig(record, '1.0')).toEqual({
      id: 'cfg',
      taskId: 'T',
      url: 'https://h',
      token: 'tok',
      authentication: { scheme: 'Bearer', credentials: '****cret' },
    });
    expect(renderPushConfig({ ...record, token: null, authentication: null }, '1.0')).toEqual({ id: 'cfg', taskId: 'T', url: 'https://h' });
  });

  it('renders lists as an array (v0.3) or {configs, nextPageToken} (v1.0)', () => {
    expect(renderPushConfigList([record], '0.3')).toHaveLength(1);
    expect(renderPushConfigList([record], '1.0')).toEqual({ configs: [renderPushConfig(record, '1.0')], nextPageToken: '' });
  });
});
