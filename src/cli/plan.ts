/** `daybook plan explain`: the planner inspected. */
import type { Command } from 'commander';
import { command } from './about.ts';
import { planExplainCommand } from './plan-explain.ts';

export function planCommand(): Command {
  const plan = command('plan');
  plan.addCommand(planExplainCommand());
  return plan;
}
