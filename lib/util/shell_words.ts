/** Split a command string into argv words the way a POSIX shell would, without running one. */

/** Thrown when a command string has an unterminated quote or a trailing backslash. */
export class ShellWordsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ShellWordsError";
  }
}

/**
 * Split `command` into words: white space separates, single quotes keep everything literally,
 * double quotes keep spaces and honour `\"`, `\\`, `\$` and `` \` ``, a backslash outside quotes
 * escapes the next character. No expansion of any kind happens.
 */
export function splitShellWords(command: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < command.length; i++) {
    const ch = command[i];
    if (ch === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) throw new ShellWordsError(`unterminated single quote in ${command}`);
      word += command.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (ch === '"') {
      inWord = true;
      let j = i + 1;
      for (; j < command.length && command[j] !== '"'; j++) {
        if (command[j] === "\\" && '"\\$`'.includes(command[j + 1] ?? "")) j++;
        word += command[j];
      }
      if (j >= command.length) throw new ShellWordsError(`unterminated double quote in ${command}`);
      i = j;
    } else if (ch === "\\") {
      if (i + 1 >= command.length) throw new ShellWordsError(`trailing backslash in ${command}`);
      word += command[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}
