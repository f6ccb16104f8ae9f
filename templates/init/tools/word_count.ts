/**
 * Tool: word_count
 * Description: Count the words, lines and characters in a text.
 * Tags: read
 *
 * Input:
 *   text (str): The text to count.
 *
 * Output:
 *   words (int): Number of words.
 *   lines (int): Number of lines.
 *   characters (int): Number of characters.
 */
export function execute(args: { text: string }) {
  const text = args.text;
  return {
    words: text.split(/\s+/).filter(Boolean).length,
    lines: text === '' ? 0 : text.split('\n').length,
    characters: [...text].length,
  };
}
