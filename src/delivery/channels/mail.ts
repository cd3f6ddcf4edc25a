/**
 * A message as a mail: the subject, a text part and an HTML part, saying the same. A mail has no
 * vendor limit: a digest goes whole, one mail per cycle. Pure.
 */
import { htmlText, mailText } from './inert.ts';
import type { Message } from './message.ts';
import { itemLine, joined, subLines } from './render.ts';
import { WORDS } from './words.ts';

export interface Mail {
  subject: string;
  text: string;
  html: string;
}

const CLIP = 2000;

export function mailOf(m: Message): Mail {
  const w = WORDS[m.lang];
  const subject = joined(m.title, mailText, 200);
  const text: string[] = [subject, ''];
  for (const f of m.facts) text.push(`${f.label}: ${joined(f.value, mailText, CLIP)}`);
  if (m.intro) text.push('', m.intro);
  if (m.items.length)
    text.push(
      '',
      ...m.items.flatMap((x) => [
        `- ${itemLine(m, x, mailText, CLIP)}`,
        ...subLines(x, mailText, CLIP).map((l) => `    - ${l}`),
      ]),
    );
  if (m.link) text.push('', `${w.link}: ${m.link}`);

  const color = { high: '#c62828', medium: '#ef6c00', low: '#546e7a' }[m.severity];
  const html: string[] = [
    `<!doctype html><html lang="${m.lang === 'zh' ? 'zh-CN' : 'en'}"><head><meta charset="utf-8"></head><body>`,
    `<h2 style="color:${color}">${joined(m.title, htmlText, 200)}</h2>`,
    '<table>',
    ...m.facts.map(
      (f) => `<tr><th align="left">${f.label}</th><td>${joined(f.value, htmlText, CLIP)}</td></tr>`,
    ),
    '</table>',
  ];
  if (m.intro) html.push(`<p>${m.intro}</p>`);
  if (m.items.length)
    html.push(
      '<ul>',
      ...m.items.map((x) => {
        const sub = subLines(x, htmlText, CLIP);
        const under = sub.length ? `<ul>${sub.map((l) => `<li>${l}</li>`).join('')}</ul>` : '';
        return `<li>${itemLine(m, x, htmlText, CLIP, (s) => `<b>${s}</b>`)}${under}</li>`;
      }),
      '</ul>',
    );
  if (m.link)
    html.push(`<p><a href="${m.link.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}">${w.link}</a></p>`);
  html.push('</body></html>');
  return { subject, text: `${text.join('\n')}\n`, html: html.join('\n') };
}
