/** Splitting a `cli_command` string into argv words the way a POSIX shell would, without a shell. */

/** A command line that cannot be split (unterminated quote or trailing backslash). */
export class CommandLineError extends Error {
  constructor(message: string, readonly input: string) {
    super(message);
    this.name = "CommandLineError";
  }
}

/**
 * Split `line` into words: white space separates words; single quotes keep everything literally;
 * double quotes keep white space and honour `\"`, `\\`, `\$` and `` \` ``; a backslash outside
 * quotes escapes the next character. No expansion of variables, globs or `~` happens.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new CommandLineError(`unterminated single quote in: ${line}`, line);
      word += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      let closed = false;
      while (i < line.length) {
        const d = line[i];
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        if (d === "\\" && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1])) {
          if (line[i + 1] !== "\n") word += line[i + 1];
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
      if (!closed) throw new CommandLineError(`unterminated double quote in: ${line}`, line);
      inWord = true;
    } else if (c === "\\") {
      if (i + 1 >= line.length) {
        throw new CommandLineError(`trailing backslash in: ${line}`, line);
      }
      if (line[i + 1] !== "\n") {
        word += line[i + 1];
        inWord = true;
      }
      i += 2;
    } else if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i++;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}
