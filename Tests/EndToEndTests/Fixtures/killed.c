// Makes 200 blocks of 512 bytes, waits for the shim to flush (HEAPLINE_SAMPLE_MS sets its
// tick), and then dies by SIGKILL with no chance to write a trailer.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
  for (int i = 0; i < 200; i++) (void)malloc(512);
  usleep(1500 * 1000);
  raise(SIGKILL);
  return 0;
}
