/**
 * An unknown command that is the name of a subcommand (`daybook import x.csv`, `daybook list`) is
 * answered with the whole command it most likely means (`watch import`), not with a top-level
 * command spelt alike (commander's own guess for `import` is `export`). Any other unknown command
 * gets commander's answer, as before.
 */
import type { Command } from 'commander';

/** The subcommands named `name`, each as its whole path below the program: `watch import`. */
export function subcommandsNamed(program: Command, name: string): string[] {
  return program.commands.flatMap((group) =>
    group.commands
      .filter((sub) => sub.name() === name || sub.aliases().includes(name))
      .map((sub) => `${group.name()} ${sub.name()}`),
  );
}

/** Makes the program's unknown-command error suggest the subcommands of that name (exit 2). */
export function suggestSubcommands(program: Command): Command {
  program.on('command:*', (operands: string[]) => {
    const name = operands[0] ?? '';
    const meant = subcommandsNamed(program, name);
    if (meant.length === 0) {
      // Commander's own message and suggestion (its method, not in its typings).
      (program as unknown as { unknownCommand(): void }).unknownCommand();
      return;
    }
    program.error(`error: unknown command '${name}'\n(Did you mean ${meant.join(' or ')}?)`, {
      code: 'commander.unknownCommand',
    });
  });
  return program;
}
