-- android.gpu.work_period: the gpu work period tracks, per uid and gpu.
CREATE PERFETTO TABLE android_gpu_work_period_track(
  id LONG, machine_id LONG, uid LONG, ugpu LONG, gpu_id LONG) AS
SELECT t.id, t.machine_id, extract_arg(t.dimension_arg_set_id, 'uid') AS uid,
  extract_arg(t.dimension_arg_set_id, 'ugpu') AS ugpu,
  extract_arg(t.dimension_arg_set_id, 'gpu') AS gpu_id
FROM track AS t WHERE t.type = 'android_gpu_work_period';
