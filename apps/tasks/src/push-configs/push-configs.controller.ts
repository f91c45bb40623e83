import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  DeletePushConfigRequest,
  GetPushConfigRequest,
  ListPushConfigsRequest,
  PUSH_CONFIG_SUBJECTS,
  PushTargetRequest,
  SetPushConfigRequest,
  type DeletePushConfigReply,
  type PushConfigListReply,
  type PushConfigView,
  type PushTargetReply,
} from '@app/contracts';
import { PushConfigsService } from './push-configs.service';

@Controller()
export class PushConfigsController {
  constructor(@Inject(PushConfigsService) private readonly pushConfigs: PushConfigsService) {}

  @MessagePattern(PUSH_CONFIG_SUBJECTS.set)
  set(@Payload() request: SetPushConfigRequest): Promise<PushConfigView> {
    return this.pushConfigs.set(request);
  }

  @MessagePattern(PUSH_CONFIG_SUBJECTS.get)
  get(@Payload() request: GetPushConfigRequest): Promise<PushConfigView> {
    return this.pushConfigs.get(request);
  }

  @MessagePattern(PUSH_CONFIG_SUBJECTS.list)
  list(@Payload() request: ListPushConfigsRequest): Promise<PushConfigListReply> {
    return this.pushConfigs.list(request);
  }

  @MessagePattern(PUSH_CONFIG_SUBJECTS.target)
  target(@Payload() request: PushTargetRequest): Promise<PushTargetReply> {
    return this.pushConfigs.target(request);
  }

  @MessagePattern(PUSH_CONFIG_SUBJECTS.delete)
  delete(@Payload() request: DeletePushConfigRequest): Promise<DeletePushConfigReply> {
    return this.pushConfigs.delete(request);
  }
}
