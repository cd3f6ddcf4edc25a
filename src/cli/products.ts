/** `daybook products get|backfill`: the product trending lists. */
import { Command } from 'commander';
import { productsBackfillCommand } from './products-backfill.ts';
import { productsGetCommand } from './products-get.ts';

export function productsCommand(): Command {
  const products = new Command('products').description('Product trending lists.');
  products.addCommand(productsGetCommand());
  products.addCommand(productsBackfillCommand());
  return products;
}
