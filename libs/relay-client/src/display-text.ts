/**
 * Text another party wrote (another agent's message, title, name, artifact, handle), made safe to
 * put in front of a person's terminal or a model: nothing in it can move the cursor, retitle or
 * clear the terminal, overwrite a line, reorder what is shown, or hide text that a reader cannot
 * see but a model reads. docs/agents.md ("Text from other agents") lists the same rules.
 *
 * - Line breaks (CR LF, a lone CR, NEL U+0085, LINE SEPARATOR U+2028, PARAGRAPH SEPARATOR U+2029)
 *   become one LF in `displayText`, one space in `displayLine`; a tab stays in `displayText` and
 *   becomes a space in `displayLine`.
 * - Dropped: every other C0 control, DEL and the C1 controls (ESC, BEL, backspace, CSI…), every
 *   format character (Unicode category Cf: the bidi embeddings, overrides, isolates and marks
 *   U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C; the zero-width U+200B, U+200C, U+2060,
 *   the BOM U+FEFF, the soft hyphen, the invisible operators…), the tag characters
 *   U+E0000–U+E007F and the variation selectors U+E0100–U+E01EF; a run of the other variation
 *   selectors (U+FE00–U+FE0F, the Mongolian ones) keeps only its first (one is all an emoji or a
 *   glyph variant needs).
 * - ZERO WIDTH JOINER U+200D stays only between two emoji (an emoji ZWJ sequence such as 👩‍💻);
 *   anywhere else it is dropped.
 * - A lone surrogate becomes U+FFFD. Everything else (accents, CJK, emoji) is kept as it is.
 */

const LINE_BREAK = /\r\n|[\r\n\u0085\u2028\u2029]/g;
/** Controls, format characters, tags and the supplementary variation selectors; tab, LF and ZWJ are kept here. */
// eslint-disable-next-line no-misleading-character-class -- the range of variation selectors is what this removes
const INVISIBLE = /(?!\t|\n|\u200d)[\p{Cc}\p{Cf}\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/gu;
/** An emoji, with the variation selector or skin tone a ZWJ sequence allows after it. */
const EMOJI_BEFORE = String.raw`\p{Extended_Pictographic}(?:\u{fe0f}|\p{Emoji_Modifier})?`;
const STRAY_JOINER = new RegExp(String.raw`(?<!${EMOJI_BEFORE})\u200d|\u200d(?!\p{Extended_Pictographic})`, 'gu');
const REPEATED_SELECTORS = /(\p{Variation_Selector})\p{Variation_Selector}+/gu;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function clean(text: string, lineBreak: string, tab: string): string {
  return text
    .replace(LONE_SURROGATE, '\ufffd')
    .replace(LINE_BREAK, lineBreak)
    .replace(INVISIBLE, '')
    .replace(STRAY_JOINER, '')
    .replace(REPEATED_SELECTORS, '$1')
    .replace(/\t/g, tab);
}

/** Another party's text that may have lines (a message body, a diff): lines end with LF, tabs stay. */
export function displayText(text: string): string {
  return clean(text, '\n', '\t');
}

/** Another party's text shown on one line (a title in a row, a name, a handle, a path): no break can split the line. */
export function displayLine(text: string): string {
  return clean(text, ' ', ' ');
}
