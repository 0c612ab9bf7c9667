// A shared object that is no power meter plugin (it has no
// sched_power_meter_create), for the loader's error test.
extern "C" int sched_power_meter_make() { return 0; }
