/** Patterns for lines whose every character is known; pure, so any tier may import it. */

/** `text` as a pattern that matches it exactly, for a line whose every character is known. */
export function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
