import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import {
  ADMIN_TASKS_SUBJECTS,
  APPROVAL_LIMITS,
  APPROVALS_SUBJECTS,
  DIRECTORY_SUBJECTS,
  fourEyesRefusal,
  orgOf,
  RelayError,
  TASK_LIMITS,
  TOOL_PROMPT_LIMITS,
  type AdminTaskDetail,
  type AdminTaskPage,
  type ApprovalDecision,
  type PendingToolPromptsReply,
  type PermissionDecision,
  type TaskView,
} from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { AdminAudit } from '../audit/admin-audit';
import { AdminExceptionFilter, AdminValidationPipe } from '../admin-errors';
import { LeastRole } from '../admin-roles';
import { adminPrincipalOf, AdminTokenGuard, type AdminPrincipal } from '../sign-in/admin-token.guard';
import { ApprovalDecisionBody, ApprovalsQuery, ToolPromptAnswerBody, ToolPromptsQuery } from './approvals.dto';

/** The person as the audit and the task name them: their email, else their subject, else the admin actor; at most APPROVAL_LIMITS.actorChars (a provider's claims have no bound). */
function nameOf(principal: AdminPrincipal): string {
  const { person } = principal;
  return (person ? (person.email ?? person.sub) : principal.actor).slice(0, APPROVAL_LIMITS.actorChars);
}

function taskIdOf(id: string): string {
  if (id.length > TASK_LIMITS.taskIdChars) throw new RelayError('task_not_found', `No task with id ${id.slice(0, 64)}…`, { task_id: id.slice(0, 64) });
  return id;
}

/**
 * Held handoffs (docs/decisions/0024-held-handoffs.md) for the people who decide them: the queue,
 * one held handoff with its full content, approve and deny. Reading needs the
 * `viewer` role (a viewer reads every task's content anyway), deciding the `approver` role; each
 * decision is in the admin audit with the person's identity. A rule with
 * `four_eyes` needs a signed-in person (not the admin token) shown not to own the sending agent, by
 * their account or a verified email (fourEyesRefusal); an agent with no owner on record is decided by
 * nobody. Otherwise 403 `four_eyes` (`data.refusal` says which) and nothing is done.
 */
@Controller('admin/approvals')
@UseGuards(AdminTokenGuard)
@LeastRole('viewer')
@UseFilters(AdminExceptionFilter)
@UsePipes(AdminValidationPipe)
export class ApprovalsController {
  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(AdminAudit) private readonly audit: AdminAudit,
  ) {}

  /** `GET /admin/approvals?limit=&cursor=`: the held handoffs, newest first. */
  @Get()
  list(@Query() query: ApprovalsQuery, @Req() request: FastifyRequest): Promise<AdminTaskPage> {
    const { orgs } = adminPrincipalOf(request);
    return this.rpc.request(ADMIN_TASKS_SUBJECTS.list, {
      states: ['held'],
      ...(orgs === 'all' ? {} : { orgs }),
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
      ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
    });
  }

  /** `GET /admin/approvals/tool-prompts?limit=`: the open tool prompts people answer (docs/decisions/0031-tool-prompts-answered-by-people.md), oldest first. */
  @Get('tool-prompts')
  toolPrompts(@Query() query: ToolPromptsQuery, @Req() request: FastifyRequest): Promise<PendingToolPromptsReply> {
    const { orgs } = adminPrincipalOf(request);
    return this.rpc.request(APPROVALS_SUBJECTS.pendingToolPrompts, {
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
      ...(orgs === 'all' ? {} : { orgs }),
    });
  }

  /** `GET /admin/approvals/{id}`: a held (or once held) handoff with its content, timeline and audit. */
  @Get(':id')
  async get(@Param('id') id: string): Promise<AdminTaskDetail> {
    const detail = await this.rpc.request(ADMIN_TASKS_SUBJECTS.get, { task_id: taskIdOf(id) });
    if (!detail.task.hold) throw new RelayError('not_held', `Task ${detail.task.id} was never held for approval`, { task_id: detail.task.id });
    return detail;
  }

  /** `POST /admin/approvals/{id}/approve {comment?}`: delivered to its recipient as if just sent. */
  @Post(':id/approve')
  @HttpCode(200)
  @LeastRole('approver')
  approve(@Param('id') id: string, @Body() body: ApprovalDecisionBody, @Req() request: FastifyRequest): Promise<TaskView> {
    return this.decide(taskIdOf(id), 'approve', body.comment, adminPrincipalOf(request));
  }

  /** `POST /admin/approvals/{id}/deny {comment?}`: rejected, the sender told the reason. */
  @Post(':id/deny')
  @HttpCode(200)
  @LeastRole('approver')
  deny(@Param('id') id: string, @Body() body: ApprovalDecisionBody, @Req() request: FastifyRequest): Promise<TaskView> {
    return this.decide(taskIdOf(id), 'deny', body.comment, adminPrincipalOf(request));
  }

  /** `POST /admin/approvals/{id}/tool-prompts/{request_id}/allow {reason?}`: the coding agent may use the tool. */
  @Post(':id/tool-prompts/:requestId/allow')
  @HttpCode(200)
  @LeastRole('approver')
  allowTool(
    @Param('id') id: string,
    @Param('requestId') requestId: string,
    @Body() body: ToolPromptAnswerBody,
    @Req() request: FastifyRequest,
  ): Promise<TaskView> {
    return this.answer(taskIdOf(id), requestId, 'allow', body.reason, adminPrincipalOf(request));
  }

  /** `POST /admin/approvals/{id}/tool-prompts/{request_id}/deny {reason?}`: it may not; the reason is what it is told. */
  @Post(':id/tool-prompts/:requestId/deny')
  @HttpCode(200)
  @LeastRole('approver')
  denyTool(
    @Param('id') id: string,
    @Param('requestId') requestId: string,
    @Body() body: ToolPromptAnswerBody,
    @Req() request: FastifyRequest,
  ): Promise<TaskView> {
    return this.answer(taskIdOf(id), requestId, 'deny', body.reason, adminPrincipalOf(request));
  }

  private async answer(
    taskId: string,
    requestId: string,
    decision: PermissionDecision,
    reason: string | undefined,
    principal: AdminPrincipal,
  ): Promise<TaskView> {
    if (requestId.length > TOOL_PROMPT_LIMITS.requestIdChars) {
      throw new RelayError('tool_prompt_not_found', `Task ${taskId} has no tool prompt ${requestId.slice(0, 64)}…`, { task_id: taskId });
    }
    const { task } = await this.rpc.request(ADMIN_TASKS_SUBJECTS.get, { task_id: taskId });
    const rules = task.tool_prompts;
    if (!rules) {
      throw new RelayError(
        'not_for_approvers',
        `The sender of task ${task.id} answers its tool prompts: no tool-prompt rule of ${task.recipient.handle}'s trust policy matched it`,
        {
          task_id: task.id,
        },
      );
    }
    if (rules.four_eyes) {
      const rule = `(tool-prompt rule "${rules.rule}")`;
      await this.checkFourEyes(task, principal, { named: `This tool prompt ${rule}`, decided: `this tool prompt ${rule}` });
    }
    const answered = await this.rpc.request(APPROVALS_SUBJECTS.answerToolPrompt, {
      task_id: task.id,
      request_id: requestId,
      decision,
      ...(reason !== undefined ? { reason } : {}),
      answered_by: nameOf(principal),
    });
    await this.audit.record(
      principal,
      decision === 'allow' ? 'tool_prompt.allow' : 'tool_prompt.deny',
      task.id,
      {
        rule: rules.rule,
        request_id: requestId,
        sender: task.sender.handle,
        recipient: task.recipient.handle,
        ...(reason ? { reason } : {}),
      },
      // Decided by the org whose rule gave it to people: its recipient's.
      orgOf(task.recipient.handle),
    );
    return answered;
  }

  private async decide(taskId: string, decision: ApprovalDecision, comment: string | undefined, principal: AdminPrincipal): Promise<TaskView> {
    const { task } = await this.rpc.request(ADMIN_TASKS_SUBJECTS.get, { task_id: taskId });
    if (task.hold?.four_eyes) {
      const rule = `(rule "${task.hold.rule}")`;
      await this.checkFourEyes(task, principal, { named: `The hold ${rule}`, decided: `this hold ${rule}` });
    }
    const { person } = principal;
    const decided = await this.rpc.request(APPROVALS_SUBJECTS.decide, {
      task_id: task.id,
      decision,
      ...(comment !== undefined ? { comment } : {}),
      decided_by: nameOf(principal),
      ...(person?.email && person.email.length <= APPROVAL_LIMITS.actorChars ? { decided_by_email: person.email } : {}),
    });
    await this.audit.record(
      principal,
      decision === 'approve' ? 'approval.approve' : 'approval.deny',
      task.id,
      {
        rule: task.hold?.rule ?? null,
        sender: task.sender.handle,
        recipient: task.recipient.handle,
        ...(comment ? { comment } : {}),
      },
      // Decided by the org whose rule held it: its recipient's.
      orgOf(task.recipient.handle),
    );
    return decided;
  }

  /** Four eyes: a person, identified by their sign-in, shown not to own the sending agent (fourEyesRefusal). */
  private async checkFourEyes(task: TaskView, principal: AdminPrincipal, what: { named: string; decided: string }): Promise<void> {
    const { person } = principal;
    const sender = task.sender.handle;
    const agent = person ? await this.rpc.request(DIRECTORY_SUBJECTS.getAgent, { handle: sender }) : null;
    const refusal = person && agent ? fourEyesRefusal(agent, person) : 'admin_token';
    if (refusal === null) return;
    const owner = agent ? { owner: agent.owner, ...(agent.email_verified ? { owner_email: agent.email } : {}) } : {};
    switch (refusal) {
      case 'admin_token':
        throw new RelayError('four_eyes', `${what.named} needs four eyes: sign in as a person to decide it, not with the admin token`, {
          task_id: task.id,
          refusal,
        });
      case 'no_owner':
        throw new RelayError(
          'four_eyes',
          `${what.named} needs four eyes, and ${sender}, the sending agent, has no owner on record (neither the owner's account nor a verified email), so nobody can be shown not to own it: an admin records its owner (PATCH /admin/agents/${sender} {"owner": {"subject": "<their sub>"}}) before anyone decides`,
          { task_id: task.id, refusal: 'no_owner', sender },
        );
      case 'owner':
        throw new RelayError('four_eyes', `You own ${sender}, the sending agent: another person must decide ${what.decided}`, {
          task_id: task.id,
          refusal,
          sender,
          ...owner,
        });
      case 'unverifiable':
        throw new RelayError(
          'four_eyes',
          `${sender}'s owner is on record only by a verified email (or an account of another provider), and your sign-in has no verified email: the relay cannot tell you are not its owner, so another person must decide ${what.decided}`,
          { task_id: task.id, refusal, sender, ...owner },
        );
    }
  }
}
