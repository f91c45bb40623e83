import { CreateNotifier1764480000000 } from './1764480000000-CreateNotifier';
import { CreatePushTargets1764490000000 } from './1764490000000-CreatePushTargets';
import { CreateSlackSlots1764500000000 } from './1764500000000-CreateSlackSlots';
import { PushTargetsPerOwner1764510000000 } from './1764510000000-PushTargetsPerOwner';
import { RecordAttemptsBeforeSending1764520000000 } from './1764520000000-RecordAttemptsBeforeSending';
import { SealWebhookSecrets1764531800000 } from './1764531800000-SealWebhookSecrets';
import { FairDelivery1764560000000 } from './1764560000000-FairDelivery';
import { Deployment1765100000000 } from './1765100000000-Deployment';
import { UpstreamAgents1765200000000 } from './1765200000000-UpstreamAgents';
import { UpstreamOAuth21765260000000 } from './1765260000000-UpstreamOAuth2';
import { UpstreamPush1765270000000 } from './1765270000000-UpstreamPush';
import { UpstreamCardsTlsHealth1765430000000 } from './1765430000000-UpstreamCardsTlsHealth';
import { UpstreamRegistrations1765460000000 } from './1765460000000-UpstreamRegistrations';
import { UpstreamTimedOutPolls1765700000000 } from './1765700000000-UpstreamTimedOutPolls';
import { UpstreamChangeNotices1765800000000 } from './1765800000000-UpstreamChangeNotices';
import { DeliveryAssertions1765812350000 } from './1765812350000-DeliveryAssertions';
import { OrgApprovalChannels1765900000000 } from './1765900000000-OrgApprovalChannels';

/** Every migration of the notifier schema, oldest first. */
export const NOTIFIER_MIGRATIONS: Array<new () => object> = [
  CreateNotifier1764480000000,
  CreatePushTargets1764490000000,
  CreateSlackSlots1764500000000,
  PushTargetsPerOwner1764510000000,
  RecordAttemptsBeforeSending1764520000000,
  SealWebhookSecrets1764531800000,
  FairDelivery1764560000000,
  Deployment1765100000000,
  UpstreamAgents1765200000000,
  UpstreamOAuth21765260000000,
  UpstreamPush1765270000000,
  UpstreamCardsTlsHealth1765430000000,
  UpstreamRegistrations1765460000000,
  UpstreamTimedOutPolls1765700000000,
  UpstreamChangeNotices1765800000000,
  DeliveryAssertions1765812350000,
  OrgApprovalChannels1765900000000,
];
