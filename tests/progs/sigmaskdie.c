/*
 * sigmaskdie HOW: a thread waits with SIGUSR1 unblocked only for the wait
 * (HOW: sigsuspend, ppoll, pselect or epoll_pwait; blocked otherwise) and
 * the main thread sends it SIGUSR1, whose default action ends the process
 * (status 138 from a shell). memprov's death recorder once let the thread
 * survive: the wait put its mask back as the recorder returned, and the
 * signal it had sent again stayed pending. "survived" on stdout says so.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

static const char *how;

static void *waiter(void *arg)
{
	sigset_t none;
	int fd;
	struct epoll_event ev;

	(void)arg;
	sigemptyset(&none);
	if (!strcmp(how, "sigsuspend")) {
		sigsuspend(&none);
	} else if (!strcmp(how, "ppoll")) {
		ppoll(NULL, 0, NULL, &none);
	} else if (!strcmp(how, "pselect")) {
		pselect(0, NULL, NULL, NULL, NULL, &none);
	} else {
		fd = epoll_create1(0);
		epoll_pwait(fd, &ev, 1, -1, &none);
	}
	puts("survived");
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	sigset_t usr1;
	pthread_t t;
	char *p;

	if (argc != 2)
		return 2;
	how = argv[1];
	p = malloc(4096); /* live at the death */
	memset(p, 1, 4096);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (pthread_create(&t, NULL, waiter, NULL))
		return 3;
	usleep(100000); /* the thread is in its wait by then, or the signal waits for it */
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	puts("main returns");
	return p[0] - 1;
}
