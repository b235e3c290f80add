import { fieldPath } from './config/schema-check.ts';

/** One issue as Ajv reports it (with `verbose`, so the failing schema is at hand). */
export interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  parentSchema?: { [keyword: string]: unknown; errorMessage?: string; anyOf?: Array<{ type?: string }> };
}

/**
 * The issue to report: the first one, unless it is one branch of a union failing at the union's own
 * field ("must be string" for a nonce that may be a number too): then the union's.
 */
function reportedIssue(issues: readonly ValidationIssue[]): ValidationIssue | undefined {
  const first = issues[0];
  const union = issues.find((i) => i.keyword === 'anyOf' && i.instancePath === first?.instancePath);
  if (!union) return first;
  const types = (union.parentSchema?.anyOf ?? []).map((branch) => branch.type).filter((t) => t !== undefined);
  return { ...union, message: types.length > 0 ? `must be ${types.join(' or ')}` : 'is invalid' };
}

/** The field at fault and what is wrong with it, from a validator's issues; undefined when there are none. */
export function describeIssues(issues: readonly ValidationIssue[]): { field: string; problem: string } | undefined {
  const issue = reportedIssue(issues);
  if (!issue) return undefined;
  const missing = issue.keyword === 'required' ? String(issue.params.missingProperty) : undefined;
  const field = fieldPath(issue.instancePath, missing);
  let problem: string;
  if (missing !== undefined) problem = 'is required';
  else if (issue.keyword === 'enum') problem = `must be one of: ${(issue.params.allowedValues as unknown[]).join(', ')}`;
  else problem = issue.parentSchema?.errorMessage ?? issue.message ?? 'is invalid';
  return { field, problem };
}
