-- android.screenshots: the screenshot slices (with a JPEG in their args).
CREATE PERFETTO TABLE android_screenshots(id LONG, ts LONG, dur LONG, name STRING) AS
SELECT s.id, s.ts, s.dur, s.name
FROM slice AS s JOIN args AS a ON a.arg_set_id = s.arg_set_id
WHERE s.name = 'Screenshot' AND s.category = 'android_screenshot'
  AND a.key = 'screenshot.jpg_image';
