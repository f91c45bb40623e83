import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  AnswerToolPromptRequest,
  APPROVALS_SUBJECTS,
  DecideHoldRequest,
  PendingToolPromptsRequest,
  type PendingToolPromptsReply,
  type TaskView,
} from '@app/contracts';
import { HoldDecisions } from './hold-decisions';

/** A person's approval or denial of a held handoff (the edge checked their role and four eyes). */
@Controller()
export class ApprovalsController {
  constructor(@Inject(HoldDecisions) private readonly decisions: HoldDecisions) {}

  @MessagePattern(APPROVALS_SUBJECTS.decide)
  decide(@Payload() request: DecideHoldRequest): Promise<TaskView> {
    return this.decisions.decide(request);
  }

  /** A person's answer to a tool prompt (the edge checked their role and four eyes). */
  @MessagePattern(APPROVALS_SUBJECTS.answerToolPrompt)
  answerToolPrompt(@Payload() request: AnswerToolPromptRequest): Promise<TaskView> {
    return this.decisions.answerToolPrompt(request);
  }

  @MessagePattern(APPROVALS_SUBJECTS.pendingToolPrompts)
  pendingToolPrompts(@Payload() request: PendingToolPromptsRequest): Promise<PendingToolPromptsReply> {
    return this.decisions.pendingToolPrompts(request);
  }
}
