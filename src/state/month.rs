//! The monthly quota counters of hosted search APIs in Redis, one per service and
//! calendar month (UTC), shared by every replica: `INCRBY` in a Lua script that also
//! raises the count to what the service itself reported (Brave's headers) and sets
//! the key to expire a day after the month ends.

/// The script. KEYS[1]: the month's counter; ARGV: what to add, the least the count
/// may be (the plan's own count, 0 when unknown), the expiry (Unix ms). Returns the
/// count.
pub const SCRIPT: &str = r"
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
local floor = tonumber(ARGV[2])
if floor > v then
  redis.call('SET', KEYS[1], floor)
  v = floor
end
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return v
";

const DAY_MS: u64 = 86_400_000;

/// The local key of `service`'s counter in the month of `now_ms`: `brave 2026-11`.
pub fn counter(service: &str, now_ms: u64) -> String {
    format!("{service} {}", crate::files::month_of(now_ms))
}

/// The first millisecond (UTC) of the month after the one of `now_ms`.
pub fn month_end_ms(now_ms: u64) -> u64 {
    let month = crate::files::month_of(now_ms);
    let mut day = now_ms / DAY_MS;
    while crate::files::month_of((day + 1) * DAY_MS) == month {
        day += 1;
    }
    (day + 1) * DAY_MS
}

/// When a counter of the month of `now_ms` expires: a day after the month ends, so
/// a replica whose clock is a little behind still finds it.
pub fn expiry_ms(now_ms: u64) -> u64 {
    month_end_ms(now_ms) + DAY_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_month_ends_at_the_first_millisecond_of_the_next() {
        // 2024-02-29 12:00 UTC (a leap year) -> 2024-03-01 00:00 UTC.
        assert_eq!(month_end_ms(1_709_208_000_000), 1_709_251_200_000);
        // The last millisecond of February is still February.
        assert_eq!(month_end_ms(1_709_251_199_999), 1_709_251_200_000);
        // The first of March ends on the first of April.
        assert_eq!(month_end_ms(1_709_251_200_000), 1_711_929_600_000);
        // December ends on the next year's first of January.
        assert_eq!(month_end_ms(1_798_675_200_000), 1_798_761_600_000); // 2026-12-31
        assert_eq!(expiry_ms(1_709_208_000_000), 1_709_251_200_000 + DAY_MS);
    }

    #[test]
    fn each_service_and_month_has_its_counter() {
        assert_eq!(counter("brave", 1_709_208_000_000), "brave 2024-02");
        assert_ne!(
            counter("brave", 1_709_208_000_000),
            counter("tavily", 1_709_208_000_000)
        );
        assert_ne!(
            counter("brave", 1_709_208_000_000),
            counter("brave", 1_709_251_200_000)
        );
    }
}
