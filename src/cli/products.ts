/** `daybook products get|backfill`: the product trending lists. */
import type { Command } from 'commander';
import { command } from './about.ts';
import { productsBackfillCommand } from './products-backfill.ts';
import { productsGetCommand } from './products-get.ts';

export function productsCommand(): Command {
  const products = command('products');
  products.addCommand(productsGetCommand());
  products.addCommand(productsBackfillCommand());
  return products;
}
