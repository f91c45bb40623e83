import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { APPROVALS_SUBJECTS, DecideHoldRequest, type TaskView } from '@app/contracts';
import { HoldDecisions } from './hold-decisions';

/** A person's approval or denial of a held handoff (the edge checked their role and four eyes). */
@Controller()
export class ApprovalsController {
  constructor(@Inject(HoldDecisions) private readonly decisions: HoldDecisions) {}

  @MessagePattern(APPROVALS_SUBJECTS.decide)
  decide(@Payload() request: DecideHoldRequest): Promise<TaskView> {
    return this.decisions.decide(request);
  }
}
