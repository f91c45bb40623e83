import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  UpstreamAppendRequest,
  UpstreamApplyRequest,
  UPSTREAM_REPORT_SUBJECTS,
  UpstreamTransitionRequest,
  type UpstreamApplyReply,
  type UpstreamReportReply,
} from '@app/contracts';
import { ReportUpstream } from './report-upstream';

/** The notifier's subjects on the tasks service: what an upstream agent answered, as that agent. */
@Controller()
export class UpstreamReportsController {
  constructor(@Inject(ReportUpstream) private readonly reports: ReportUpstream) {}

  @MessagePattern(UPSTREAM_REPORT_SUBJECTS.append)
  append(@Payload() request: UpstreamAppendRequest): Promise<UpstreamReportReply> {
    return this.reports.append(request);
  }

  @MessagePattern(UPSTREAM_REPORT_SUBJECTS.transition)
  transition(@Payload() request: UpstreamTransitionRequest): Promise<UpstreamReportReply> {
    return this.reports.transition(request);
  }

  @MessagePattern(UPSTREAM_REPORT_SUBJECTS.apply)
  apply(@Payload() request: UpstreamApplyRequest): Promise<UpstreamApplyReply> {
    return this.reports.apply(request);
  }
}
