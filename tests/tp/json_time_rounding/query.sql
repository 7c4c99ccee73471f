-- Times (µs) become ns as Perfetto v58.2 does: integers exactly; other
-- numbers, and strings holding one valid number, through the double its
-- json parser makes of the text (integer part + fraction digits / 10^n),
-- rounded to the nearest ns (Go's cmd/trace writes 48.09599999999999).
select name, ts, dur from slice order by name;
select value from stats where name = 'json_tokenizer_failure';
