import { Type } from 'class-transformer';
import { IsArray, IsIn, IsNotEmpty, IsOptional, IsString, ValidateNested } from 'class-validator';
import { ParticipantRefDto } from './tasks.contract';
import { WIRE_VERSIONS, type WireVersion } from '../wire-version';

/**
 * A2A push-notification configs of a task, kept by the tasks service (participant-only, ids and a
 * quota of 10 per participant and task) and delivered by the notifier.
 */
export const PUSH_CONFIG_SUBJECTS = {
  set: 'relay.tasks.v1.push_configs.set',
  get: 'relay.tasks.v1.push_configs.get',
  list: 'relay.tasks.v1.push_configs.list',
  delete: 'relay.tasks.v1.push_configs.delete',
  /** Internal (the notifier only, never routed from HTTP): one config with its token and credentials in full. */
  target: 'relay.tasks.v1.push_configs.target',
} as const;

/**
 * JetStream subjects on which the tasks service tells the notifier about config changes. The events
 * never carry the token or credentials: the notifier asks for them (`PUSH_CONFIG_SUBJECTS.target`).
 */
export const PUSH_CONFIG_EVENTS = {
  set: 'relay.events.push_config.set',
  deleted: 'relay.events.push_config.deleted',
} as const;

/** An HTTP authentication scheme token (RFC 9110), as a push config's `authentication` names it. */
export const AUTH_SCHEME_TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
/** A token or credentials go into a header: one line. */
export const ONE_LINE = /^[^\r\n]*$/;

export class PushAuthenticationDto {
  @IsArray()
  @IsString({ each: true })
  schemes!: string[];

  @IsOptional()
  @IsString()
  credentials?: string;
}

export class PushConfigInput {
  /** The relay makes a UUID when absent. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  id?: string;

  @IsString()
  url!: string;

  @IsOptional()
  @IsString()
  token?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => PushAuthenticationDto)
  authentication?: PushAuthenticationDto;
}

/** A push-config request about one task, by one of its participants. */
export class PushConfigTaskRequest {
  @ValidateNested()
  @Type(() => ParticipantRefDto)
  caller!: ParticipantRefDto;

  @IsString()
  @IsNotEmpty()
  task_id!: string;

  /** On an agent's endpoint (`/a2a/{handle}`): that agent's id. A task whose other party is not that agent is `thread_not_found`. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  counterpart_id?: string;
}

export class SetPushConfigRequest extends PushConfigTaskRequest {
  /** The A2A version the config was registered with: it decides the payload the notifier posts. */
  @IsIn(WIRE_VERSIONS)
  version!: WireVersion;

  @ValidateNested()
  @Type(() => PushConfigInput)
  config!: PushConfigInput;
}

export class GetPushConfigRequest extends PushConfigTaskRequest {
  /** Absent: the task's first config (v0.3 get without `pushNotificationConfigId`). */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  config_id?: string;
}

export class ListPushConfigsRequest extends PushConfigTaskRequest {}

export class DeletePushConfigRequest extends PushConfigTaskRequest {
  @IsString()
  @IsNotEmpty()
  config_id!: string;
}

/** Names one config for the notifier: the event's task, owner handle and config id. */
export class PushTargetRequest {
  @IsString()
  @IsNotEmpty()
  task_id!: string;

  @IsString()
  @IsNotEmpty()
  owner!: string;

  @IsString()
  @IsNotEmpty()
  config_id!: string;
}

/**
 * One config as the notifier delivers to it, its token and credentials sealed to the notifier's key
 * (`sealForNotifier`): only the notifier opens them. `target: null` once it is deleted.
 */
export interface PushTargetReply {
  target: {
    version: WireVersion;
    url: string;
    sealed_token: string | null;
    authentication: { schemes: string[]; sealed_credentials: string | null } | null;
  } | null;
}

/** A config as the relay returns it: `token` and `credentials` masked, never in full. */
export interface PushConfigView {
  id: string;
  task_id: string;
  url: string;
  token: string | null;
  authentication: { schemes: string[]; credentials: string | null } | null;
}

export interface PushConfigListReply {
  configs: PushConfigView[];
}

export interface DeletePushConfigReply {
  /** False when there was nothing to delete (delete is idempotent). */
  deleted: boolean;
}

export interface PushConfigRpc {
  [PUSH_CONFIG_SUBJECTS.set]: { request: SetPushConfigRequest; reply: PushConfigView };
  [PUSH_CONFIG_SUBJECTS.get]: { request: GetPushConfigRequest; reply: PushConfigView };
  [PUSH_CONFIG_SUBJECTS.list]: { request: ListPushConfigsRequest; reply: PushConfigListReply };
  [PUSH_CONFIG_SUBJECTS.delete]: { request: DeletePushConfigRequest; reply: DeletePushConfigReply };
  [PUSH_CONFIG_SUBJECTS.target]: { request: PushTargetRequest; reply: PushTargetReply };
}
