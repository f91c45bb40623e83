import { CreateTasks1764480000000 } from './1764480000000-CreateTasks';
import { CreatePushConfigs1764490000000 } from './1764490000000-CreatePushConfigs';
import { PushConfigsPerOwner1764510000000 } from './1764510000000-PushConfigsPerOwner';
import { MessageAndArtifactSizes1764520000000 } from './1764520000000-MessageAndArtifactSizes';
import { OutboxTraceParent1764530000000 } from './1764530000000-OutboxTraceParent';
import { PushSecretsOutOfOutbox1764531800000 } from './1764531800000-PushSecretsOutOfOutbox';
import { TaskEventReplay1764540000000 } from './1764540000000-TaskEventReplay';

import { OneNameForTasks1764550000000 } from './1764550000000-OneNameForTasks';
import { ConsoleReads1764560000000 } from './1764560000000-ConsoleReads';
import { PushConfigsPerAgent1764560100000 } from './1764560100000-PushConfigsPerAgent';
import { InboxPositions1764570000000 } from './1764570000000-InboxPositions';
import { Retention1764580000000 } from './1764580000000-Retention';
import { BoundedSearch1764590000000 } from './1764590000000-BoundedSearch';
import { Deployment1765100000000 } from './1765100000000-Deployment';
import { HeldHandoffs1765300000000 } from './1765300000000-HeldHandoffs';
import { HeldTaskEvent1765410000000 } from './1765410000000-HeldTaskEvent';
import { ToolPromptAnswers1765440000000 } from './1765440000000-ToolPromptAnswers';
import { SearchTextInPlpgsql1765450000000 } from './1765450000000-SearchTextInPlpgsql';
import { HandoffChains1765460000000 } from './1765460000000-HandoffChains';
import { HandoffTraces1765470000000 } from './1765470000000-HandoffTraces';
import { TaskUnpublishedEvents1765473600036 } from './1765473600036-TaskUnpublishedEvents';
import { ChainTreeIndex1765523300000 } from './1765523300000-ChainTreeIndex';
import { ChainRootSender1765812340000 } from './1765812340000-ChainRootSender';
import { OpenHandoffsBySenderOrg1765845300000 } from './1765845300000-OpenHandoffsBySenderOrg';
import { OrgStoredBytes1765870000000 } from './1765870000000-OrgStoredBytes';
import { PairCreatedAt1765900000000 } from './1765900000000-PairCreatedAt';

/** Every migration of the tasks schema, oldest first. */
export const TASKS_MIGRATIONS: Array<new () => object> = [
  CreateTasks1764480000000,
  CreatePushConfigs1764490000000,
  PushConfigsPerOwner1764510000000,
  MessageAndArtifactSizes1764520000000,
  OutboxTraceParent1764530000000,
  PushSecretsOutOfOutbox1764531800000,
  TaskEventReplay1764540000000,
  OneNameForTasks1764550000000,
  ConsoleReads1764560000000,
  PushConfigsPerAgent1764560100000,
  InboxPositions1764570000000,
  Retention1764580000000,
  BoundedSearch1764590000000,
  Deployment1765100000000,
  HeldHandoffs1765300000000,
  HeldTaskEvent1765410000000,
  ToolPromptAnswers1765440000000,
  SearchTextInPlpgsql1765450000000,
  HandoffChains1765460000000,
  HandoffTraces1765470000000,
  TaskUnpublishedEvents1765473600036,
  ChainTreeIndex1765523300000,
  ChainRootSender1765812340000,
  OpenHandoffsBySenderOrg1765845300000,
  OrgStoredBytes1765870000000,
  PairCreatedAt1765900000000,
];
