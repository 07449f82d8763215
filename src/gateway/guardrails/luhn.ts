/**
 * The Luhn check (ISO/IEC 7812) over a string of ASCII digits: every payment card number passes
 * it, and a random digit string passes one time in ten. False for an empty string or any
 * character that is not a digit.
 */
export function luhnValid(digits: string): boolean {
  const n = digits.length;
  if (n === 0) return false;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    let d = digits.charCodeAt(n - 1 - i) - 48;
    if (d < 0 || d > 9) return false;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}
